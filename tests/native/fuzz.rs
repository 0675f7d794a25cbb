//! A fuzz test of our own: seeded, bounded in count and (past a floor of cases) in time, run
//! in CI. Damaged variants of the shipped weights, of a chunk and its manifest, of a saved
//! run's state and of a checkpoint must each give a typed error or a valid value: never a
//! panic, and never more memory than a budget. Each part runs in a process of its own, so that a counting
//! allocator can meter the whole process (every thread Burn uses) and nothing else.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use burn::module::Module;
use vitlab::data::{self, ChunkEntry, Manifest};
use vitlab::rng::SplitMix64;
use vitlab::train::{Checkpoint, Session, SessionState, TrainingPlan};
use vitlab::weights;

/// System's allocator, counting what the process holds while the meter is on.
struct Metered;

static METERING: AtomicBool = AtomicBool::new(false);
static HELD: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn count(delta: isize) {
    if METERING.load(Relaxed) {
        let held = HELD.fetch_add(delta, Relaxed) + delta;
        PEAK.fetch_max(held, Relaxed);
    }
}

// SAFETY: every call is forwarded to `System` unchanged; the counting touches only atomics,
// which never allocate.
unsafe impl GlobalAlloc for Metered {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: the caller's contract for `alloc`, passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        // SAFETY: `ptr` came from `System` through `alloc` or `realloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        // SAFETY: as for `dealloc`; the caller's contract for `realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Metered = Metered;

/// Runs `work` and returns its result and the most memory the process held, on any thread,
/// above what it held before. Meaningful only in a process running nothing else: see
/// [`alone`].
fn metered<T>(work: impl FnOnce() -> T) -> (T, usize) {
    HELD.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    METERING.store(true, Relaxed);
    let result = work();
    METERING.store(false, Relaxed);
    (result, PEAK.load(Relaxed).max(0) as usize)
}

/// Which part [`alone`] runs.
const PART: &str = "VITLAB_FUZZ_PART";

/// One part of the fuzz, in a process of its own (see the module's note); what it printed.
fn in_own_process(part: &str) {
    let output = crate::in_own_process("fuzz::alone", (PART, part));
    // Its table lines, for `--nocapture`.
    for line in output.lines().filter(|line| line.contains("clear errors")) {
        println!("{line}");
    }
}

#[test]
#[ignore = "run by the fuzz tests, each part in a process of its own"]
fn alone() {
    let Ok(part) = std::env::var(PART) else {
        return;
    };
    let ((), seen) = metered(|| drop(std::thread::spawn(|| vec![1u8; 8 << 20]).join()));
    assert!(
        seen >= 8 << 20,
        "the meter saw {seen} bytes of another thread's 8 MiB"
    );
    match part.as_str() {
        "weights" => weights_part(),
        "data" => data_part(),
        "saved run" => saved_run_part(),
        "checkpoint" => checkpoint_part(),
        "header" => header_part(),
        other => panic!("no fuzz part {other:?}"),
    }
}

#[test]
fn damaged_weights_give_errors_or_models_never_panics() {
    in_own_process("weights");
}

#[test]
fn damaged_chunks_and_manifests_give_errors_never_panics() {
    in_own_process("data");
}

#[test]
fn damaged_saved_runs_give_errors_never_panics() {
    in_own_process("saved run");
}

#[test]
fn damaged_checkpoints_give_errors_never_panics() {
    in_own_process("checkpoint");
}

#[test]
fn the_largest_headers_are_read_in_a_few_times_their_bytes() {
    in_own_process("header");
}

/// A safetensors file whose header is `json`, padded with spaces to `size` bytes, and no data.
fn with_header(json: &str, size: usize) -> Vec<u8> {
    let mut header = json.as_bytes().to_vec();
    header.resize(size.max(header.len()), b' ');
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&header);
    bytes
}

/// Headers of the largest size read (16 MiB), each as a hostile file might fill it: numbers
/// by the million in one shape, entries by the hundred thousand, metadata keys by the
/// hundred thousand, one enormous string; and one the size accepted that parses whole (its
/// metadata one long string). Each is read holding at most a few times its bytes, and each
/// is refused with a short message.
fn header_part() {
    let size = weights::MAX_HEADER_BYTES as usize;
    // `open`, then as many units (the `i`th from `unit(i)`) as the size holds, then `close`.
    let fill = |unit: &dyn Fn(usize) -> String, open: &str, close: &str| {
        let mut json = String::with_capacity(size);
        json.push_str(open);
        let room = size - close.len() - 1;
        for i in 0.. {
            let next = unit(i);
            if json.len() + next.len() + 1 > room {
                break;
            }
            if i > 0 {
                json.push(',');
            }
            json.push_str(&next);
        }
        json.push_str(close);
        json
    };
    let cases = [
        (
            "a shape of millions of numbers",
            fill(
                &|_| "0".into(),
                r#"{"w":{"dtype":"F32","shape":["#,
                r#"],"data_offsets":[0,0]}}"#,
            ),
        ),
        (
            "hundreds of thousands of tensors",
            fill(
                &|i| format!(r#""t{i}":{{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#),
                "{",
                "}",
            ),
        ),
        (
            "hundreds of thousands of metadata keys",
            fill(&|i| format!(r#""k{i}":"v""#), r#"{"__metadata__":{"#, "}}"),
        ),
        (
            "one enormous string",
            format!(r#"{{"__metadata__":{{"x":"{}"}}}}"#, "a".repeat(size - 64)),
        ),
        (
            "nested arrays",
            format!(
                r#"{{"w":{{"dtype":"F32","shape":{}}}}}"#,
                "[".repeat(size / 2)
            ),
        ),
    ];
    let mut most = 0;
    for (what, json) in cases {
        let bytes = with_header(&json, size);
        drop(json);
        let (outcome, peak) =
            metered(|| weights::decode(&bytes).map(drop).map_err(|e| e.to_string()));
        let message = outcome.expect_err(what);
        assert!(
            message.len() < 1000,
            "{what}: a {}-byte message",
            message.len()
        );
        assert!(
            peak < 4 * size,
            "{what}: {peak} bytes held for a {size}-byte header ({message})"
        );
        most = most.max(peak);
        println!(
            "a {size}-byte header of {what}: refused ({message}), {:.1} MB held at most",
            peak as f64 / 1e6
        );
    }
    println!(
        "the largest headers: {:.1} MB held at most: clear errors",
        most as f64 / 1e6
    );
}

/// Ways to damage bytes: flips, cuts, insertions, a forged length, digits made enormous.
fn damage(bytes: &[u8], rng: &mut SplitMix64) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let at = |rng: &mut SplitMix64, len: usize| rng.below(len.max(1));
    match rng.below(6) {
        0 => {
            for _ in 0..1 + rng.below(8) {
                let i = at(rng, out.len());
                out[i] ^= 1 << rng.below(8);
            }
        }
        1 => out.truncate(at(rng, out.len())),
        2 => {
            let i = at(rng, out.len());
            let noise: Vec<u8> = (0..1 + rng.below(64))
                .map(|_| rng.next_u64() as u8)
                .collect();
            out.splice(i..i, noise);
        }
        3 => {
            let i = at(rng, out.len());
            let end = (i + 1 + rng.below(64)).min(out.len());
            out.drain(i..end);
        }
        4 if out.len() >= 8 => {
            // A length prefix (safetensors' header length) of any size.
            out[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        _ => {
            // A number in the text made huge, negative or fractional.
            let digits: Vec<usize> = (0..out.len().min(1 << 16))
                .filter(|&i| out[i].is_ascii_digit())
                .collect();
            if let Some(&i) = digits.get(at(rng, digits.len())) {
                let forged = [
                    "18446744073709551615",
                    "-1",
                    "1e308",
                    "0",
                    "4294967297",
                    "0.5",
                ];
                out.splice(i..i + 1, forged[rng.below(forged.len())].bytes());
            }
        }
    }
    out
}

/// The cases each part tries at most, and the time after which it stops trying more.
const CASES: usize = 2000;
const TIME: Duration = Duration::from_secs(20);
/// The cases each part tries however long they take: a slow or busy machine runs longer
/// rather than testing less. The slowest part (`inflated chunk`, a deflate per case) tried
/// 485 to 702 in `TIME` on the project's 2-core machine with the other core busy (and others
/// compiling), in the release profile; every other part, all 2000 in under 5 s.
const MIN_CASES: usize = 300;
/// No damaged input may make its reader hold more than this at once.
const MEMORY: usize = 64 << 20;

/// Tries `CASES` damaged variants of `original` on `read`, or as many as `TIME` allows but
/// never fewer than `MIN_CASES`; panics name the seed and case.
fn fuzz<T>(name: &str, original: &[u8], seed: u64, read: impl Fn(&[u8]) -> Result<T, String>) {
    let mut rng = SplitMix64::new(seed);
    let started = Instant::now();
    let (mut errors, mut accepted, mut most) = (0, 0, 0);
    for case in 0..CASES {
        if case >= MIN_CASES && started.elapsed() > TIME {
            break;
        }
        let bytes = damage(original, &mut rng);
        let (outcome, peak) =
            metered(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read(&bytes))));
        let outcome =
            outcome.unwrap_or_else(|_| panic!("{name}: case {case} of seed {seed} panicked"));
        match outcome {
            Ok(_) => accepted += 1,
            Err(message) => {
                assert!(
                    message.len() < 1000,
                    "{name} case {case}: a {}-byte message",
                    message.len()
                );
                errors += 1;
            }
        }
        assert!(peak < MEMORY, "{name} case {case}: {peak} bytes held");
        most = most.max(peak);
    }
    let cases = errors + accepted;
    println!(
        "{name}: {cases} cases, {errors} clear errors, {accepted} accepted, the most held {:.1} MB, in {:.1} s",
        most as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    assert!(
        cases >= MIN_CASES,
        "{name}: {cases} cases, fewer than {MIN_CASES}"
    );
    assert!(errors > 0, "{name}: no variant was refused");
}

fn weights_part() {
    let original = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/pretrained/vit-seed.safetensors"
    ))
    .unwrap();
    fuzz("weights", &original, 1, |bytes| {
        let file = weights::decode(bytes).map_err(|e| e.to_string())?;
        // What decodes must build: the model is the proof that the file was whole.
        let model = file.into_model(&crate::device());
        Ok(model.num_params())
    });
}

fn mnist_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("www/mnist")
}

fn in_slices(
    bytes: &[u8],
    entry: &ChunkEntry,
    work: usize,
) -> Result<data::MnistSet, data::ChunkError> {
    let mut decoder = data::ChunkDecoder::verified(bytes, entry);
    loop {
        if let Some(decoded) = decoder.step(work) {
            return decoded;
        }
    }
}

fn data_part() {
    let manifest_json = std::fs::read(mnist_dir().join("manifest.json")).unwrap();
    let manifest = Manifest::parse(std::str::from_utf8(&manifest_json).unwrap()).unwrap();
    fuzz("manifest", &manifest_json, 2, |bytes| {
        Manifest::parse(&String::from_utf8_lossy(bytes)).map_err(|e| e.to_string())
    });
    let entry = &manifest.test[0];
    let chunk = std::fs::read(mnist_dir().join(&entry.file)).unwrap();
    // Damaged as downloaded: the checksum catches it.
    fuzz("chunk", &chunk, 3, |bytes| {
        data::decode_chunk(bytes, entry).map_err(|e| e.to_string())
    });
    fuzz("chunk in slices", &chunk, 7, |bytes| {
        // The page's way, in slices of a size that varies from case to case.
        let sliced = in_slices(bytes, entry, 1 + bytes.len() % 100_000);
        assert_eq!(
            sliced,
            data::decode_chunk(bytes, entry),
            "sliced and whole agree"
        );
        sliced.map_err(|e| e.to_string())
    });
    // Damaged before it was compressed, and listed with its true checksum: the decoder's own
    // checks must hold.
    let raw = miniz_oxide::inflate::decompress_to_vec(&chunk).unwrap();
    fuzz("inflated chunk", &raw, 4, |bytes| {
        let compressed = miniz_oxide::deflate::compress_to_vec(bytes, 1);
        let listed = ChunkEntry {
            sha256: data::sha256_hex(&compressed),
            bytes: compressed.len(),
            ..entry.clone()
        };
        let sliced = in_slices(&compressed, &listed, 1 + bytes.len() % 100_000);
        assert_eq!(sliced, data::decode_chunk(&compressed, &listed));
        sliced.map_err(|e| e.to_string())
    });
}

fn saved_run_part() {
    let session = Session::new(TrainingPlan::lab(), 60_000, &crate::device()).unwrap();
    let original = serde_json::to_vec(&session.state()).unwrap();
    let lab_weights = weights::decode(&weights::to_safetensors(
        &session.inference_model(),
        &session.plan.config,
    ))
    .unwrap();
    fuzz("saved run", &original, 5, |bytes| {
        let state: SessionState = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        state.summary().map_err(|e| e.to_string())?;
        // What checks out must resume.
        let checkpoint = Checkpoint {
            weights: lab_weights.clone(),
            state,
            moments: None,
        };
        Session::resume(checkpoint, &crate::device())
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
}

fn checkpoint_part() {
    // A run one step in, so the moments are there to damage too.
    let plan = TrainingPlan {
        config: vitlab::model::VitConfig::seed()
            .with_depth(1)
            .with_dim(16)
            .with_heads(2)
            .with_mlp_dim(32)
            .into(),
        batch_size: 8,
        ..TrainingPlan::seed()
    };
    let device = crate::device();
    let mut session = Session::new(plan, 64, &device).unwrap();
    let entry =
        Manifest::parse(&std::fs::read_to_string(mnist_dir().join("manifest.json")).unwrap())
            .unwrap()
            .test[0]
            .clone();
    let chunk = std::fs::read(mnist_dir().join(&entry.file)).unwrap();
    session.add_train(&data::decode_chunk(&chunk, &entry).unwrap().slice(0..64));
    let pending = session.begin_step().unwrap();
    let loss = pending.loss.clone().into_scalar::<f32>();
    session.finish_step(&pending, loss, 0, 0.1).unwrap();
    let original = session.checkpoint().encode();
    fuzz("checkpoint", &original, 6, |bytes| {
        let checkpoint =
            Checkpoint::decode(bytes, &vitlab::model::Budget::CLI).map_err(|e| e.to_string())?;
        // What checks out must resume.
        Session::resume(checkpoint, &device)
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
}
