//! Browser tests: `wasm-bindgen-test` in headless Chromium (see scripts/test.sh), built with the
//! workers' features (`--features gpu`), so they share the workers' build of the library. WebGPU
//! is SwiftShader there, so the WebGPU cases are few and small; the rest run on the CPU backend.
//! The page's interface is tested in `web_ui.rs`, built as the page is.
#![cfg(target_arch = "wasm32")]

mod browser;

use std::rc::Rc;

use browser::{FIRST_TRAIN_CHUNK, PARITY_WEIGHTS, drawing_here, engine_here, real_digits, sleep};
use vitlab::data::images_tensor;
use vitlab::data::{IMAGE_PIXELS, IMAGE_SIDE};
use vitlab::model::HeadsOff;
use vitlab::protocol::BackendKind;
use vitlab::web::drawing::DrawingError;
use vitlab::web::{Engine, LocalModel, start_device};
use vitlab::weights;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const PARITY_JSON: &str = include_str!("fixtures/parity.json");
const SEED_WEIGHTS: &[u8] = include_bytes!("../pretrained/vit-seed.safetensors");

#[derive(serde::Deserialize)]
struct Fixture {
    images: Vec<Vec<u8>>,
    logits: Vec<Vec<f32>>,
}

/// The device `backend` starts; the test fails where it fell back to another.
async fn device_on(backend: BackendKind) -> burn::tensor::Device {
    let started = start_device(Some(backend)).await;
    assert_eq!(started.backend, backend, "{:?}", started.fallback_reason);
    started.device
}

/// Runs the parity fixture through the model on `backend`; the worst difference from
/// PyTorch's logits.
async fn parity_error(backend: BackendKind) -> f32 {
    let device = device_on(backend).await;
    let fixture: Fixture = serde_json::from_str(PARITY_JSON).unwrap();
    let (model, _) = weights::load(PARITY_WEIGHTS, &device).unwrap();
    let images = images_tensor(&fixture.images, &device);
    let ours = model
        .forward(images)
        .into_data_async()
        .await
        .unwrap()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .unwrap();
    let expected: Vec<f32> = fixture.logits.iter().flatten().copied().collect();
    assert_eq!(ours.len(), expected.len(), "logit count");
    ours.iter()
        .zip(&expected)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max)
}

#[wasm_bindgen_test]
async fn cpu_backend_matches_pytorch() {
    let error = parity_error(BackendKind::Cpu).await;
    assert!(error < 1e-4, "largest logit difference {error}");
}

#[wasm_bindgen_test]
async fn webgpu_starts_and_matches_pytorch() {
    let error = parity_error(BackendKind::WebGpu).await;
    assert!(error < 1e-3, "largest logit difference {error}");
}

/// On WebGPU the forward pass runs in fused kernels (LayerNorm, attention, bias with GELU or
/// the residual); on the CPU in Burn's ops. Both must give the same probabilities and the same
/// attention maps, the heatmaps' source.
#[wasm_bindgen_test]
async fn webgpu_fused_kernels_give_the_cpu_probabilities_and_attention_maps() {
    let gpu = device_on(BackendKind::WebGpu).await;
    let fixture: Fixture = serde_json::from_str(PARITY_JSON).unwrap();
    let images: Vec<[u8; IMAGE_PIXELS]> = fixture.images[..2]
        .iter()
        .map(|image| image.clone().try_into().unwrap())
        .collect();
    let file = weights::decode(PARITY_WEIGHTS).unwrap();
    let on_gpu = LocalModel::new(&file, gpu)
        .classify_packed(&images, None)
        .await
        .unwrap();
    let on_cpu = LocalModel::new(&file, burn::tensor::Device::flex())
        .classify_packed(&images, None)
        .await
        .unwrap();
    assert_eq!(on_gpu.len(), on_cpu.len());
    assert_eq!(on_gpu.len(), 2 * (10 + 6 * 8 * 17 * 17));
    let worst = on_gpu
        .iter()
        .zip(&on_cpu)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(worst < 1e-4, "largest difference {worst}");
}

#[wasm_bindgen_test]
async fn the_cpu_can_be_forced() {
    let started = start_device(Some(BackendKind::Cpu)).await;
    assert_eq!(started.backend, BackendKind::Cpu);
    assert!(started.fallback_reason.is_none());
    assert_eq!(BackendKind::parse("cpu"), Some(BackendKind::Cpu));
    assert_eq!(BackendKind::parse("WebGPU"), Some(BackendKind::WebGpu));
}

#[wasm_bindgen_test]
async fn corrupt_weights_are_refused_not_a_panic() {
    let truncated = &PARITY_WEIGHTS[..PARITY_WEIGHTS.len() / 2];
    let Err(DrawingError::Refused(error)) = drawing_here().load(truncated).await else {
        panic!("truncated weights were not refused");
    };
    assert!(error.contains("truncated or corrupt"), "{error}");
}

#[wasm_bindgen_test]
async fn every_map_the_worker_reads_has_its_shape_and_its_weights_sum_to_at_most_one() {
    let engine = engine_here(PARITY_WEIGHTS).await;
    let fixture: Fixture = serde_json::from_str(PARITY_JSON).unwrap();
    let image: [u8; IMAGE_PIXELS] = fixture.images[0].clone().try_into().unwrap();
    let reading = engine.classify(&image, HeadsOff::default()).await.unwrap();
    // The parity model: patch 7 (16 patches), 6 layers of 8 heads.
    assert_eq!(reading.class_maps.len(), 6);
    assert_eq!(reading.patch_maps.len(), 6);
    assert_eq!(reading.distances.len(), 6);
    for (maps, (patch_maps, distances)) in reading
        .class_maps
        .iter()
        .zip(reading.patch_maps.iter().zip(&reading.distances))
    {
        assert_eq!(maps.len(), 9, "8 heads and their mean");
        for map in maps {
            // The class token's attention over the patches: what is left stays on itself.
            let total: f32 = map.iter().sum();
            assert!(
                map.len() == 16 && total > 0.0 && total <= 1.0 + 1e-4,
                "{total}"
            );
        }
        assert_eq!(patch_maps.len(), 16 * 16);
        for row in patch_maps.chunks(16) {
            assert!(row.iter().sum::<f32>() <= 1.0 + 1e-4);
        }
        // Within the 28-pixel image.
        assert!(distances.len() == 8 && distances.iter().all(|d| (0.0..=40.0).contains(d)));
    }
    let rollout: f32 = reading.rollout.iter().sum();
    assert!(reading.rollout.len() == 16 && rollout > 0.0 && rollout <= 1.0 + 1e-4);
    assert!((reading.probabilities.iter().sum::<f32>() - 1.0).abs() < 1e-5);
}

// --- Training in the browser -------------------------------------------------------------

fn chunk_entry(bytes: &[u8], items: usize) -> vitlab::data::ChunkEntry {
    vitlab::data::ChunkEntry {
        file: "chunk-test.bin".into(),
        items,
        bytes: bytes.len(),
        sha256: vitlab::data::sha256_hex(bytes),
    }
}

fn quick_retries(attempts: u32) -> vitlab::data::RetryPolicy {
    vitlab::data::RetryPolicy {
        attempts,
        first_delay_ms: 10,
        max_delay_ms: 20,
    }
}

/// A network that answers from `answers` in turn and counts the calls.
fn scripted_network(
    answers: Vec<Result<Vec<u8>, String>>,
) -> (vitlab::web::Network, Rc<std::cell::Cell<usize>>) {
    let calls = Rc::new(std::cell::Cell::new(0));
    let answers = Rc::new(std::cell::RefCell::new(answers));
    let counter = calls.clone();
    let network: vitlab::web::Network = Rc::new(move |_url: String| {
        counter.set(counter.get() + 1);
        let answer = answers.borrow_mut().remove(0);
        Box::pin(async move { answer })
    });
    (network, calls)
}

#[wasm_bindgen_test]
async fn a_damaged_cached_chunk_is_refetched_and_the_cache_repaired() {
    use vitlab::web::{ByteCache, ChunkSource, delete_cache};
    let set = real_digits(20);
    let good = vitlab::data::encode_chunk(&set);
    let entry = chunk_entry(&good, 20);
    delete_cache("vitlab-test-chunks").await;
    let cache = ByteCache::open("vitlab-test-chunks").await.unwrap();
    let mut damaged = good.clone();
    damaged[good.len() / 2] ^= 0x10;
    let url = "vitlab-test/chunk-test.bin";
    cache.put(url, &damaged).await.unwrap();

    let (network, calls) = scripted_network(vec![Ok(good.clone())]);
    let source = ChunkSource::with_parts("vitlab-test", Some(cache.clone()), network);
    let mut retries = Vec::new();
    let loaded = source
        .load(&entry, quick_retries(3), |retry| {
            retries.push(retry.clone())
        })
        .await
        .unwrap();
    assert_eq!(loaded.set, set);
    assert!(!loaded.from_cache);
    assert_eq!(calls.get(), 1);
    assert_eq!(retries.len(), 1);
    assert!(retries[0].reason.contains("checksum"), "{:?}", retries[0]);
    assert_eq!(
        cache.get(url).await.unwrap(),
        good,
        "the cache holds the good copy now"
    );

    // The next load is the cache's, with no network at all.
    let again = source.load(&entry, quick_retries(3), |_| {}).await.unwrap();
    assert!(again.from_cache);
    assert_eq!(calls.get(), 1);
    delete_cache("vitlab-test-chunks").await;
}

/// The training loop's turn between steps lets a message already queued for the thread (a
/// Pause, a Stop) run before the loop goes on; a turn in microtasks would not.
#[wasm_bindgen_test]
async fn a_training_loop_s_turn_lets_a_queued_message_run_first() {
    use std::cell::Cell;
    use wasm_bindgen::closure::Closure;
    let channel = web_sys::MessageChannel::new().unwrap();
    let heard = Rc::new(Cell::new(0));
    let listener = Closure::<dyn FnMut()>::new({
        let heard = heard.clone();
        move || heard.set(heard.get() + 1)
    });
    channel
        .port1()
        .set_onmessage(Some(listener.as_ref().unchecked_ref()));
    for turn in 1..=3 {
        channel
            .port2()
            .post_message(&wasm_bindgen::JsValue::NULL)
            .unwrap();
        vitlab::web::yield_to_messages().await;
        assert_eq!(
            heard.get(),
            turn,
            "the message queued before turn {turn} had not run"
        );
    }
}

/// The page decodes its test digits on its own thread: in slices, with the thread free to
/// run other tasks between them (at once, a chunk holds it for its whole decode).
#[wasm_bindgen_test]
async fn a_chunk_decoded_in_slices_leaves_the_page_free_between_them() {
    use std::cell::Cell;
    use vitlab::data::{ChunkDecoder, UI_SLICE_BYTES};
    use vitlab::web::ChunkSource;
    let entry = chunk_entry(FIRST_TRAIN_CHUNK, 2500);
    let whole = vitlab::data::decode_chunk(FIRST_TRAIN_CHUNK, &entry).unwrap();
    let performance = web_sys::window().unwrap().performance().unwrap();
    let now = || performance.now();
    // Slices of the page's size; the time of all, of the longest, and their count.
    let in_slices = || {
        let (started, mut decoder) = (now(), ChunkDecoder::verified(FIRST_TRAIN_CHUNK, &entry));
        let (mut slices, mut longest) = (0, 0f64);
        loop {
            let slice_started = now();
            let decoded = decoder.step(UI_SLICE_BYTES);
            longest = longest.max(now() - slice_started);
            slices += 1;
            if let Some(decoded) = decoded {
                assert_eq!(decoded.unwrap(), whole);
                return (now() - started, longest, slices);
            }
        }
    };
    // Chrome runs a wasm function first as compiled quickly, and later as compiled again
    // with optimisations: the first rounds show the page's first decode, the last the rest.
    for round in 1..=4 {
        let started = now();
        vitlab::data::decode_chunk(FIRST_TRAIN_CHUNK, &entry).unwrap();
        let whole_ms = now() - started;
        let (sliced_ms, longest, slices) = in_slices();
        console_log!(
            "chunk decode, round {round}: at once {whole_ms:.1} ms; in {slices} slices {sliced_ms:.1} ms, the longest {longest:.2} ms"
        );
    }
    let (_, _, slices) = in_slices();

    // Another task gets its turns while the source decodes in slices.
    let (ticks, done) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(false)));
    let (ticker_ticks, ticker_done) = (ticks.clone(), done.clone());
    wasm_bindgen_futures::spawn_local(async move {
        while !ticker_done.get() {
            ticker_ticks.set(ticker_ticks.get() + 1);
            sleep(0).await;
        }
    });
    let (network, _) = scripted_network(vec![Ok(FIRST_TRAIN_CHUNK.to_vec())]);
    let source = ChunkSource::with_parts("vitlab-test", None, network).in_slices();
    let loaded = source.load(&entry, quick_retries(1), |_| {}).await.unwrap();
    done.set(true);
    assert_eq!(loaded.set, whole);
    assert!(
        ticks.get() >= slices / 2,
        "{} turns for another task in {slices} slices",
        ticks.get()
    );
}

#[wasm_bindgen_test]
async fn a_failing_fetch_is_retried_until_it_succeeds() {
    use vitlab::web::ChunkSource;
    let set = real_digits(10);
    let good = vitlab::data::encode_chunk(&set);
    let entry = chunk_entry(&good, 10);
    let (network, calls) = scripted_network(vec![
        Err("HTTP 503".into()),
        Err("network error".into()),
        Ok(good),
    ]);
    let source = ChunkSource::with_parts("vitlab-test", None, network);
    let mut retries = Vec::new();
    let loaded = source
        .load(&entry, quick_retries(4), |retry| {
            retries.push(retry.clone())
        })
        .await
        .unwrap();
    assert_eq!(loaded.set, set);
    assert_eq!(calls.get(), 3);
    assert_eq!(
        retries.iter().map(|r| r.attempt).collect::<Vec<_>>(),
        [1, 2]
    );
}

#[wasm_bindgen_test]
async fn a_chunk_that_is_never_served_is_an_error_after_the_retries() {
    // The real network: the test server has no such file.
    let source = vitlab::web::ChunkSource::open("no-such-folder").await;
    let entry = chunk_entry(b"whatever", 1);
    let mut retries = 0;
    let error = source
        .load(&entry, quick_retries(3), |_| retries += 1)
        .await
        .err()
        .unwrap()
        .to_string();
    assert_eq!(retries, 2);
    assert!(
        error.contains("3 tries") && error.contains("404"),
        "{error}"
    );
}

/// A few steps of a tiny model on one batch of real digits, read back asynchronously as the
/// worker does: the loss must fall.
async fn training_lowers_the_loss(backend: BackendKind, steps: usize, dropout: f64) {
    use vitlab::train::{Session, TrainingPlan};
    let device = device_on(backend).await;
    let plan = TrainingPlan {
        config: vitlab::model::VitConfig::seed()
            .with_depth(1)
            .with_dim(32)
            .with_heads(4)
            .with_mlp_dim(64)
            .with_dropout(dropout)
            .into(),
        batch_size: 32,
        lr: 5e-3,
        ..TrainingPlan::seed()
    };
    let mut session = Session::new(plan, 2500, &device).unwrap();
    // One batch's worth: every step sees the same 32 digits.
    session.add_train(&real_digits(32));
    let mut losses = Vec::new();
    for _ in 0..steps {
        let pending = session.begin_step().unwrap();
        let loss = vitlab::web::read_floats_async(pending.loss.clone(), "loss")
            .await
            .unwrap()[0];
        let correct = vitlab::web::read_ints_async(pending.correct.clone(), "correct")
            .await
            .unwrap()[0];
        session.finish_step(&pending, loss, correct, 0.1).unwrap();
        losses.push(loss);
    }
    assert!(
        losses[steps - 1] < 0.9 * losses[0],
        "{backend:?}: {losses:?}"
    );
}

/// Training on WebGPU runs LayerNorm and attention, forward and backward, in fused kernels:
/// every parameter's gradient must be that of Burn's ops on the CPU.
#[wasm_bindgen_test]
async fn webgpu_fused_gradients_equal_those_of_burn_on_the_cpu() {
    use vitlab::train::parameter_gradients;
    let gpu = device_on(BackendKind::WebGpu).await;
    let config = vitlab::model::VitConfig::seed()
        .with_depth(1)
        .with_dim(32)
        .with_heads(4)
        .with_mlp_dim(64)
        .with_dropout(0.0);
    let config = vitlab::model::ModelConfig::from(config);
    let cpu = burn::tensor::Device::flex();
    vitlab::model::seed_randomness(&cpu, 5);
    let bytes = weights::to_safetensors_async(&config.init(&cpu), &config)
        .await
        .unwrap();
    let file = weights::decode(&bytes).unwrap();
    let digits = real_digits(8);
    let indices: Vec<usize> = (0..8).collect();
    let mut per_device = Vec::new();
    for device in [cpu, gpu] {
        let device = device.autodiff();
        let model = file.into_model(&device);
        let mut gradients = Vec::new();
        for gradient in parameter_gradients(&model, &digits.batch(&indices, &device)) {
            gradients.push(
                vitlab::web::read_floats_async(gradient, "a gradient")
                    .await
                    .unwrap(),
            );
        }
        per_device.push(gradients);
    }
    let (on_cpu, on_gpu) = (&per_device[0], &per_device[1]);
    assert_eq!(on_cpu.len(), on_gpu.len());
    for (index, (cpu, gpu)) in on_cpu.iter().zip(on_gpu).enumerate() {
        let scale = cpu.iter().fold(1e-6f32, |m, v| m.max(v.abs()));
        let worst = cpu
            .iter()
            .zip(gpu)
            .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
        assert!(
            worst <= 1e-3 * scale,
            "parameter {index}: {worst} against {scale}"
        );
    }
}

/// The model's own CPU kernels (SIMD128 here) against Burn's ops in the same build: the same
/// gradients for every parameter of the seed model on a batch of 64. (Times taken here would
/// mislead: V8 runs a wasm function's first calls in its baseline compiler, Liftoff, and a
/// test ends before the kernels are recompiled; `bench-train.mjs` measures the worker.)
#[wasm_bindgen_test]
async fn the_cpu_kernels_give_burn_s_gradients_in_the_browser() {
    use vitlab::model::CpuKernels;
    use vitlab::train::parameter_gradients;
    let config = vitlab::model::VitConfig::seed().with_dropout(0.0);
    let device = burn::tensor::Device::flex().autodiff();
    vitlab::model::seed_randomness(&device, 7);
    let model = vitlab::model::ModelConfig::from(config).init(&device);
    let digits = real_digits(64);
    let indices: Vec<usize> = (0..64).collect();
    let batch = digits.batch(&indices, &device);
    let mut per_path = Vec::new();
    for kernels in [CpuKernels::Fused, CpuKernels::Composed] {
        kernels.choose();
        let mut gradients = Vec::new();
        for gradient in parameter_gradients(&model, &batch) {
            gradients.push(
                vitlab::web::read_floats_async(gradient, "a gradient")
                    .await
                    .unwrap(),
            );
        }
        per_path.push(gradients);
    }
    CpuKernels::Fused.choose();
    let (fused, composed) = (&per_path[0], &per_path[1]);
    assert_eq!(fused.len(), composed.len());
    for (index, (fused, composed)) in fused.iter().zip(composed).enumerate() {
        let scale = composed.iter().fold(1e-6f32, |m, v| m.max(v.abs()));
        let worst = fused
            .iter()
            .zip(composed)
            .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
        assert!(
            worst <= 1e-4 * scale,
            "parameter {index}: {worst} against {scale}"
        );
    }
}

#[wasm_bindgen_test]
async fn training_steps_lower_the_loss_on_the_cpu() {
    training_lowers_the_loss(BackendKind::Cpu, 15, 0.0).await;
}

/// With dropout on, so that the fused attention's own dropout masks (drawn in its kernels, the
/// same in the backward pass) are trained through.
#[wasm_bindgen_test]
async fn training_steps_lower_the_loss_on_webgpu() {
    training_lowers_the_loss(BackendKind::WebGpu, 10, 0.1).await;
}

#[wasm_bindgen_test]
async fn an_invalid_upload_leaves_the_old_model_working() {
    let worker = drawing_here();
    let before = Engine::load(PARITY_WEIGHTS, worker.clone(), BackendKind::Cpu)
        .await
        .unwrap();
    let image: [u8; IMAGE_PIXELS] = real_digits(1).image(0).try_into().unwrap();
    let first = before.classify(&image, HeadsOff::default()).await.unwrap();
    let Err(DrawingError::Refused(error)) =
        Engine::load(b"not a safetensors file", worker.clone(), BackendKind::Cpu).await
    else {
        panic!("bytes that are not weights were not refused");
    };
    // The first 8 bytes read as a header length far past the file's end.
    assert!(error.contains("header claims"), "{error}");
    // The worker kept the model it had: the same image reads the same.
    let again = before.classify(&image, HeadsOff::default()).await.unwrap();
    assert_eq!(first.probabilities, again.probabilities);

    // Valid weights do replace it.
    let other = Engine::load(SEED_WEIGHTS, worker, BackendKind::Cpu)
        .await
        .unwrap();
    let replaced = other.classify(&image, HeadsOff::default()).await.unwrap();
    assert_ne!(first.probabilities, replaced.probabilities);
}

/// On 32 bits `12 + count · 785` wraps: a chunk claiming 5,471,296 images once passed the
/// length check with 76 bytes and then sliced out of range, crashing the page. Seeded
/// damaged chunks and weights must each give a typed error or a value, never a panic
/// (a panic here is the page's death, so the test itself would not return).
#[wasm_bindgen_test]
fn the_chunk_decoder_and_weights_reader_survive_hostile_bytes_on_32_bits() {
    assert_eq!(usize::BITS, 32);
    let count = ((u32::MAX as u64 + 1) / 785 + 1) as u32;
    let mut raw = vitlab::data::CHUNK_MAGIC.to_vec();
    raw.extend_from_slice(&count.to_le_bytes());
    raw.extend_from_slice(&(IMAGE_SIDE as u16).to_le_bytes());
    // 5,471,296 · 785 wraps to 64: with a 64-byte body the old length check held.
    raw.extend_from_slice(&[0; 2 + 64]);
    assert_eq!(
        raw.len(),
        12usize.wrapping_add((count as usize).wrapping_mul(785))
    );
    let bytes = miniz_oxide::deflate::compress_to_vec(&raw, 6);
    assert_eq!(
        vitlab::data::decode_chunk_unverified(&bytes).unwrap_err(),
        vitlab::data::ChunkError::TooMany(count as usize)
    );

    let mut rng = vitlab::rng::SplitMix64::new(9);
    let mut refused = 0;
    for _ in 0..300 {
        let mut damaged = raw.clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(16);
            damaged[at] = rng.next_u64() as u8;
        }
        let bytes = miniz_oxide::deflate::compress_to_vec(&damaged, 1);
        refused += vitlab::data::decode_chunk_unverified(&bytes).is_err() as usize;
        let mut weights = PARITY_WEIGHTS.to_vec();
        let at = rng.below(weights.len().min(4096));
        weights[at] = rng.next_u64() as u8;
        if at < 8 {
            weights[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        let _ = weights::decode(&weights);
    }
    assert!(refused > 0);
}

/// A response that never comes is given up on after the stall time, and one that comes in
/// time is kept: `fetch_bytes` waits on every step (response, each body chunk) this way.
#[wasm_bindgen_test]
async fn a_response_that_never_comes_is_given_up_on() {
    let never: js_sys::Promise = js_sys::Promise::new(&mut |_, _| {});
    let error = vitlab::web::within(50, "never.bin", JsFuture::from(never))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("never.bin stalled"), "{error}");
    let soon: js_sys::Promise = js_sys::Promise::resolve(&wasm_bindgen::JsValue::from(7));
    let value = vitlab::web::within(5_000, "soon.bin", JsFuture::from(soon)).await;
    assert_eq!(value.unwrap().unwrap().as_f64(), Some(7.0));
}

/// A worker of the test's own for `KeptWorker`: what it was given, and whether it failed.
#[derive(Default)]
struct FakeWorker {
    failed: std::cell::Cell<bool>,
    given: std::cell::RefCell<Vec<usize>>,
}

impl vitlab::web::Failing for FakeWorker {
    fn has_failed(&self) -> bool {
        self.failed.get()
    }
}

#[wasm_bindgen_test]
async fn a_kept_worker_starts_once_takes_each_weights_once_and_starts_again_after_a_failure() {
    use std::cell::Cell;
    use vitlab::web::KeptWorker;

    let kept = KeptWorker::<FakeWorker>::default();
    let started = Cell::new(0);
    let start = || {
        started.set(started.get() + 1);
        Ok::<_, ()>(Rc::new(FakeWorker::default()))
    };
    let give = |worker: Rc<FakeWorker>, weights: Rc<Vec<u8>>| async move {
        worker.given.borrow_mut().push(weights.len());
        Ok(())
    };
    let (a, b) = (Rc::new(vec![1u8; 3]), Rc::new(vec![2u8; 5]));

    let first = kept.with_weights(&a, start, give).await.unwrap();
    let again = kept.with_weights(&a, start, give).await.unwrap();
    assert!(
        Rc::ptr_eq(&first, &again),
        "the same worker for the same weights"
    );
    assert_eq!((started.get(), first.given.borrow().clone()), (1, vec![3]));
    // Other weights go to the same worker.
    let other = kept.with_weights(&b, start, give).await.unwrap();
    assert!(Rc::ptr_eq(&first, &other));
    assert_eq!(*first.given.borrow(), vec![3, 5]);
    // A failed worker is started again, and given the weights.
    first.failed.set(true);
    let fresh = kept.with_weights(&b, start, give).await.unwrap();
    assert!(!Rc::ptr_eq(&first, &fresh));
    assert_eq!((started.get(), fresh.given.borrow().clone()), (2, vec![5]));
    // One that could not take the weights is let go: the next asking starts another.
    let refuse = |_: Rc<FakeWorker>, _: Rc<Vec<u8>>| async { Err(()) };
    assert_eq!(kept.with_weights(&a, start, refuse).await.err(), Some(()));
    let after = kept.get_or_start(start).unwrap();
    assert!(!Rc::ptr_eq(&fresh, &after));
    assert_eq!(started.get(), 3);
    // A healthy one is kept; let go, the next asking starts one.
    assert!(Rc::ptr_eq(&after, &kept.get_or_start(start).unwrap()));
    kept.forget();
    kept.get_or_start(start).unwrap();
    assert_eq!(started.get(), 4);
}
