//! The model's own CPU kernels (`model/fused`): their arithmetic against references, and the
//! model through them against the model through Burn's ops.

use burn::tensor::Device;
use vitlab::model::{CpuKernels, VitConfig, fast_math, seed_randomness};
use vitlab::train::{OptimizerSettings, Trainer, parameter_gradients};
use vitlab::{native, weights};

use crate::{device, sample_images, to_vec};

/// Evenly spaced points of `[from, to]`.
fn points(from: f64, to: f64, count: usize) -> impl Iterator<Item = f32> {
    (0..=count).map(move |i| (from + (to - from) * i as f64 / count as f64) as f32)
}

#[test]
fn exp_is_within_two_ulp_and_erf_within_1e_minus_6() {
    let mut worst_exp = 0.0f64;
    for x in points(-87.0, 88.0, 200_000) {
        let exact = (x as f64).exp();
        worst_exp = worst_exp.max(((fast_math::exp(x) as f64) - exact).abs() / exact);
    }
    assert!(worst_exp < 2.4e-7, "exp: relative error {worst_exp:e}");
    let mut worst_erf = 0.0f64;
    let mut worst_gaussian = 0.0f64;
    for x in points(-6.0, 6.0, 200_000) {
        let (erf, gaussian) = fast_math::erf_and_gaussian(x);
        worst_erf = worst_erf.max((erf as f64 - libm::erf(x as f64)).abs());
        let exact = (-(x as f64) * (x as f64)).exp();
        worst_gaussian = worst_gaussian.max((gaussian as f64 - exact).abs());
    }
    // 1.5e-7 in exact arithmetic; f32 rounding of `1 − poly · e^(−x²)` near 0 adds ~4e-7.
    assert!(worst_erf < 1e-6, "erf: absolute error {worst_erf:e}");
    assert!(
        worst_gaussian < 1e-7,
        "exp(-x²): absolute error {worst_gaussian:e}"
    );
    // GELU and its derivative against the f64 formulas, where the MLP's values lie.
    let mut worst_gelu = 0.0f64;
    for x in points(-10.0, 10.0, 100_000) {
        let x64 = x as f64;
        let cdf = 0.5 * (1.0 + libm::erf(x64 / 2f64.sqrt()));
        let pdf = (-0.5 * x64 * x64).exp() / (2.0 * std::f64::consts::PI).sqrt();
        worst_gelu = worst_gelu
            .max((fast_math::gelu(x) as f64 - x64 * cdf).abs())
            .max((fast_math::gelu_derivative(x) as f64 - (cdf + x64 * pdf)).abs());
    }
    assert!(worst_gelu < 1e-6, "GELU: absolute error {worst_gelu:e}");
}

#[test]
fn exp_keeps_nan_and_saturates_without_overflow() {
    assert!(fast_math::exp(f32::NAN).is_nan());
    assert!(fast_math::exp(f32::INFINITY).is_finite());
    assert!(fast_math::exp(f32::NEG_INFINITY) < 1e-37);
    assert!(fast_math::gelu(f32::NAN).is_nan());
    assert_eq!(fast_math::gelu(-30.0).abs(), 0.0);
    assert_eq!(fast_math::gelu(30.0), 30.0);
}

#[test]
fn sums_and_dots_of_every_length_are_exact_on_integers() {
    for len in 0..40 {
        let a: Vec<f32> = (0..len).map(|i| i as f32 - 7.0).collect();
        let b: Vec<f32> = (0..len).map(|i| (i % 5) as f32).collect();
        assert_eq!(fast_math::sum(&a), a.iter().sum::<f32>(), "sum of {len}");
        let dot: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert_eq!(fast_math::dot(&a, &b), dot, "dot of {len}");
    }
}

/// Model sizes that reach each kernel's special cases: the seed's heads of 8; heads of 12
/// (padded to 16 lanes) over 17 tokens (a row of scores padded to 24); a head wider than the
/// attention kernel takes (composed by Burn's ops, the rest fused).
fn configs() -> Vec<VitConfig> {
    vec![
        VitConfig::seed().with_depth(2),
        VitConfig::lab()
            .with_depth(1)
            .with_dim(48)
            .with_heads(4)
            .with_mlp_dim(40),
        VitConfig::seed()
            .with_depth(1)
            .with_dim(136)
            .with_heads(1)
            .with_mlp_dim(24),
    ]
}

/// `run` with the CPU's encoder on the fused kernels, then on Burn's ops.
fn both_ways<T>(run: impl Fn() -> T) -> (T, T) {
    CpuKernels::Fused.choose();
    let fused = run();
    CpuKernels::Composed.choose();
    let composed = run();
    CpuKernels::Fused.choose();
    (fused, composed)
}

fn assert_close(fused: &[f32], composed: &[f32], relative: f32, what: &str) {
    assert_eq!(fused.len(), composed.len(), "{what}");
    let scale = composed.iter().fold(1e-6f32, |m, v| m.max(v.abs()));
    let worst = fused
        .iter()
        .zip(composed)
        .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
    assert!(worst <= relative * scale, "{what}: {worst} against {scale}");
}

#[test]
fn the_fused_forward_pass_gives_burn_s_logits_and_attention() {
    for config in configs() {
        let cpu = device();
        seed_randomness(&cpu, 5);
        let model = config.init(&cpu);
        for batch in [1, 9] {
            let images = sample_images(batch, config.image_size, &cpu);
            let ((logits, attention), (logits_burn, attention_burn)) = both_ways(|| {
                let output = model.forward_with_attention(images.clone());
                let attention: Vec<Vec<f32>> = output.attention.into_iter().map(to_vec).collect();
                (to_vec(output.logits), attention)
            });
            let name = format!("dim {} heads {} batch {batch}", config.dim, config.heads);
            assert_close(&logits, &logits_burn, 1e-5, &format!("logits, {name}"));
            for (fused, burn) in attention.iter().zip(&attention_burn) {
                assert_close(fused, burn, 1e-5, &format!("attention, {name}"));
            }
        }
    }
}

#[test]
fn the_fused_backward_pass_gives_burn_s_gradients() {
    let dir = native::default_data_dir();
    let manifest = native::read_manifest(&dir).unwrap();
    let set = native::load_chunk(&dir, &manifest.train[0]).unwrap();
    // Rows enough for several blocks of the row-wise kernels and of the attention's images.
    let indices: Vec<usize> = (0..37).collect();
    for config in configs() {
        let config = config.with_dropout(0.0);
        let training: Device = device().autodiff();
        seed_randomness(&training, 9);
        let model = vitlab::model::ModelConfig::from(config.clone()).init(&training);
        let batch = set.batch(&indices, &training);
        let (fused, composed) = both_ways(|| {
            parameter_gradients(&model, &batch)
                .into_iter()
                .map(to_vec)
                .collect::<Vec<_>>()
        });
        assert_eq!(fused.len(), composed.len());
        for (index, (fused, composed)) in fused.iter().zip(&composed).enumerate() {
            let name = format!(
                "dim {} heads {}, parameter {index}",
                config.dim, config.heads
            );
            assert_close(fused, composed, 1e-4, &name);
            assert!(fused.iter().any(|g| *g != 0.0), "{name}: no gradient");
        }
    }
}

/// The weights after `steps` training steps with dropout (the attention kernel's own mask),
/// from the weights `start`, on a pool of `threads` threads.
fn trained_on(threads: usize, steps: usize, start: &[u8]) -> Vec<u8> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let dir = native::default_data_dir();
        let manifest = native::read_manifest(&dir).unwrap();
        let set = native::load_chunk(&dir, &manifest.train[0]).unwrap();
        let training: Device = device().autodiff();
        // The masks' stream, which is this thread's: Burn's own generator is the process's,
        // which tests beside this one draw from too, so the weights come from `start`.
        seed_randomness(&training, 21);
        let file = weights::decode(start).unwrap();
        let config = file.config.clone();
        let mut trainer = Trainer::new(
            file.into_model(&training),
            config.clone(),
            OptimizerSettings::default(),
            &training,
        );
        for step in 0..steps {
            let indices: Vec<usize> = (step * 64..step * 64 + 64).collect();
            let batch = set.batch(&indices, trainer.device());
            let loss = trainer.step(&batch, 1e-3).loss.into_scalar::<f32>();
            assert!(loss.is_finite());
        }
        weights::to_safetensors(&trainer.inference_model(), &config)
    })
}

#[test]
fn fused_training_with_dropout_is_the_same_on_one_thread_or_two() {
    let config = VitConfig::seed().with_depth(2);
    let start = crate::fresh_weights(config.clone());
    let one = trained_on(1, 3, &start);
    assert_eq!(
        one,
        trained_on(2, 3, &start),
        "two threads trained other weights"
    );
    assert_eq!(
        one,
        trained_on(1, 3, &start),
        "the same run trained other weights"
    );
    assert_ne!(one, trained_on(1, 2, &start), "a step changed nothing");
}
