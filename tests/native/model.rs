use burn::module::Module;
use burn::nn::DropoutConfig;
use burn::tensor::Tensor;
use burn::tensor::activation::softmax;
use burn::tensor::{Device, Distribution, Tolerance};
use vitlab::model::{
    ConfigError, VitConfig, attention_softmax, bernoulli_mask, dropout, seed_randomness, seeded,
};

use crate::{device, sample_images, to_vec};

#[test]
fn seed_preset_matches_the_pytorch_model() {
    let config = VitConfig::seed();
    assert_eq!(
        (
            config.image_size,
            config.patch_size,
            config.dim,
            config.depth,
            config.heads,
            config.mlp_dim
        ),
        (28, 7, 64, 6, 8, 128)
    );
    assert_eq!(config.num_params(), 204_810);
    assert_eq!(config.init(&device()).num_params(), 204_810);
}

#[test]
fn parameter_count_formula_agrees_with_the_module_for_other_sizes() {
    let config = VitConfig::lab()
        .with_depth(2)
        .with_dim(32)
        .with_heads(4)
        .with_mlp_dim(48);
    assert_eq!(config.init(&device()).num_params(), config.num_params());
}

#[test]
fn logits_and_attention_have_the_documented_shapes() {
    let device = device();
    for config in [VitConfig::seed(), VitConfig::lab().with_depth(2)] {
        let model = config.init(&device);
        let output = model.forward_with_attention(sample_images(3, 28, &device));
        assert_eq!(output.logits.dims(), [3, 10]);
        assert_eq!(output.attention.len(), config.depth);
        let tokens = config.num_tokens();
        for layer in &output.attention {
            assert_eq!(layer.dims(), [3, config.heads, tokens, tokens]);
        }
    }
}

#[test]
fn attention_rows_sum_to_one() {
    let device = device();
    let config = VitConfig::lab().with_depth(2);
    let model = config.init(&device);
    let output = model.forward_with_attention(sample_images(2, 28, &device));
    for layer in output.attention {
        let sums = to_vec(layer.clone().sum_dim(3));
        assert!(sums.iter().all(|sum| (sum - 1.0).abs() < 1e-5), "{sums:?}");
        assert!(to_vec(layer).iter().all(|p| *p >= 0.0));
    }
}

#[test]
fn forward_and_forward_with_attention_agree() {
    let device = device();
    let model = VitConfig::seed().init(&device);
    let images = sample_images(2, 28, &device);
    let plain = to_vec(model.forward(images.clone()));
    let with_attention = to_vec(model.forward_with_attention(images).logits);
    assert_eq!(plain, with_attention);
}

#[test]
fn invalid_configs_are_named() {
    assert_eq!(
        VitConfig::seed().with_patch_size(5).validate(),
        Err(ConfigError::PatchDoesNotDivideImage {
            patch: 5,
            image: 28
        })
    );
    assert_eq!(
        VitConfig::seed().with_heads(5).validate(),
        Err(ConfigError::HeadsDoNotDivideDim { heads: 5, dim: 64 })
    );
    assert_eq!(
        VitConfig::seed().with_dropout(1.0).validate(),
        Err(ConfigError::Dropout(1.0))
    );
    assert_eq!(
        VitConfig::seed().with_depth(0).validate(),
        Err(ConfigError::Zero("depth"))
    );
    use vitlab::model::Preset;
    assert_eq!(
        Preset::parse("lab").map(vitlab::model::ModelConfig::preset),
        Some(VitConfig::lab().into())
    );
    assert_eq!(
        Preset::parse("cnn").map(vitlab::model::ModelConfig::preset),
        Some(vitlab::model::CnnConfig::seed().into())
    );
    assert!(Preset::parse("huge").is_none());
    assert!(
        "huge"
            .parse::<Preset>()
            .unwrap_err()
            .contains("seed, lab, cnn")
    );
}

/// Burn's generator is the process's: a seeded initialisation must be the seed's however
/// many other threads initialise models or seed meanwhile (two sessions of one test once
/// started from different weights on CI).
#[test]
fn a_seeded_initialisation_is_the_seed_s_whatever_other_threads_draw() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let config = VitConfig::seed().with_depth(1).with_dim(16).with_heads(2);
    let first_weights = |model: &vitlab::model::VisionTransformer| {
        to_vec(model.head.weight.val().flatten::<1>(0, 1))
    };
    let device = device();
    let (done, drawing) = (AtomicBool::new(false), AtomicUsize::new(0));
    std::thread::scope(|scope| {
        for other_seed in 0..3 {
            let (config, device, done, drawing) = (&config, &device, &done, &drawing);
            scope.spawn(move || {
                drawing.fetch_add(1, Ordering::Relaxed);
                while !done.load(Ordering::Relaxed) {
                    seed_randomness(device, other_seed);
                    let _ = config.init(device);
                }
            });
        }
        while drawing.load(Ordering::Relaxed) < 3 {
            std::thread::yield_now();
        }
        let draws: Vec<Vec<f32>> = (0..20)
            .map(|_| seeded(&device, 42, || first_weights(&config.init(&device))))
            .collect();
        done.store(true, Ordering::Relaxed);
        assert!(
            draws.windows(2).all(|pair| pair[0] == pair[1]),
            "every initialisation seeded with 42 drew the same weights"
        );
    });
}

#[test]
fn dropout_masks_keep_the_asked_share_scaled_and_repeat_per_stream() {
    let keep = 0.9;
    // An odd length, over several blocks, so the remainder and block seams are covered.
    let mask = bernoulli_mask(100_001, keep, 17);
    let scale = (1.0 / keep) as f32;
    assert!(mask.iter().all(|&value| value == 0.0 || value == scale));
    let kept = mask.iter().filter(|&&value| value != 0.0).count() as f64 / mask.len() as f64;
    // Binomial standard deviation here is ~0.001.
    assert!((kept - keep).abs() < 0.005, "kept {kept}");
    assert_eq!(mask, bernoulli_mask(100_001, keep, 17));
    let other = bernoulli_mask(100_001, keep, 18);
    let agree = mask.iter().zip(&other).filter(|(a, b)| a == b).count() as f64;
    // Independent masks agree on keep² + (1 - keep)² = 82 % of places, not all of them.
    assert!((agree / mask.len() as f64 - 0.82).abs() < 0.01);
    // Neighbouring blocks are not copies of each other.
    assert_ne!(mask[..16_384], mask[16_384..32_768]);
}

#[test]
fn cpu_dropout_applies_only_in_training_and_its_gradient_is_the_mask() {
    let layer = DropoutConfig::new(0.25).init();
    let values: Vec<f32> = (1..=4096).map(|i| i as f32).collect();
    let inference = Tensor::<1>::from_floats(values.as_slice(), &device());
    assert_eq!(to_vec(dropout(&layer, inference)), values);

    let training_device = device().autodiff();
    seed_randomness(&training_device, 3);
    let input = Tensor::<1>::from_floats(values.as_slice(), &training_device).require_grad();
    let output = dropout(&layer, input.clone());
    let gradient = to_vec(input.grad(&output.clone().sum().backward()).unwrap());
    let output = to_vec(output);
    let zeroed = output.iter().filter(|&&value| value == 0.0).count();
    assert!((800..1250).contains(&zeroed), "{zeroed} of 4096 zeroed");
    for ((value, out), grad) in values.iter().zip(&output).zip(&gradient) {
        if *out == 0.0 {
            assert_eq!(*grad, 0.0);
        } else {
            assert!((out - value / 0.75).abs() <= 1e-3 * out.abs());
            assert!((grad - 1.0 / 0.75).abs() < 1e-6);
        }
    }

    // The same seed draws the same mask; a frozen layer passes its input through.
    seed_randomness(&training_device, 3);
    let again = dropout(
        &layer,
        Tensor::<1>::from_floats(values.as_slice(), &training_device),
    );
    assert_eq!(to_vec(again), output);
    let frozen = layer.freeze();
    let passed = dropout(
        &frozen,
        Tensor::<1>::from_floats(values.as_slice(), &training_device),
    );
    assert_eq!(to_vec(passed), values);
}

#[test]
fn small_attention_softmax_equals_the_fused_one() {
    let device = device();
    let scores = seeded(&device, 2, || {
        Tensor::<4>::random([2, 3, 5, 7], Distribution::Normal(0.0, 4.0), &device)
    });
    let composed = attention_softmax(scores.clone()).into_data();
    let fused = softmax(scores, 3).into_data();
    composed.assert_approx_eq::<f32>(&fused, Tolerance::absolute(1e-6));
}

#[test]
fn small_attention_softmax_has_the_fused_gradient() {
    let training_device: Device = device().autodiff();
    let shape = [1, 2, 4, 6];
    let (scores, weights) = seeded(&training_device, 2, || {
        (
            Tensor::<4>::random(shape, Distribution::Normal(0.0, 3.0), &training_device),
            Tensor::<4>::random(shape, Distribution::Normal(0.0, 1.0), &training_device),
        )
    });
    let gradient = |softmax_of: &dyn Fn(Tensor<4>) -> Tensor<4>| {
        let input = scores.clone().detach().require_grad();
        let loss = (softmax_of(input.clone()) * weights.clone()).sum();
        input.grad(&loss.backward()).unwrap().into_data()
    };
    let composed = gradient(&attention_softmax);
    let fused = gradient(&|scores| softmax(scores, 3));
    composed.assert_approx_eq::<f32>(&fused, Tolerance::absolute(1e-6));
    assert!(composed.iter::<f32>().any(|value| value.abs() > 1e-3));
}

/// On a GPU the forward and backward passes run in fused kernels (LayerNorm, attention); their
/// gradients must be those of Burn's ops on the CPU. Needs `--features gpu` and a GPU (Mesa's
/// lavapipe will do); CI holds the same to account on WebGPU in the browser tests.
#[cfg(feature = "gpu")]
#[test]
fn fused_gpu_gradients_equal_those_of_burn_on_the_cpu() {
    use burn::tensor::DeviceKind;
    use vitlab::model::ModelConfig;
    use vitlab::train::parameter_gradients;
    use vitlab::{native, weights};

    let config: ModelConfig = VitConfig::seed().with_depth(2).with_dropout(0.0).into();
    let cpu = device();
    seed_randomness(&cpu, 3);
    let bytes = weights::to_safetensors(&config.init(&cpu), &config);
    let file = weights::decode(&bytes).unwrap();
    let dir = native::default_data_dir();
    let manifest = native::read_manifest(&dir).unwrap();
    let set = native::load_chunk(&dir, &manifest.train[0]).unwrap();
    let indices: Vec<usize> = (0..8).collect();
    let gradients = |device: Device| -> Vec<Vec<f32>> {
        let device = device.autodiff();
        let model = file.into_model(&device);
        let batch = set.batch(&indices, &device);
        parameter_gradients(&model, &batch)
            .into_iter()
            .map(to_vec)
            .collect()
    };
    let on_cpu = gradients(cpu);
    let on_gpu = gradients(Device::wgpu(DeviceKind::DefaultDevice));
    assert_eq!(on_cpu.len(), on_gpu.len());
    for (index, (cpu, gpu)) in on_cpu.iter().zip(&on_gpu).enumerate() {
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

/// The fused attention's backward pass with dropout on (its kernels draw the mask from a
/// seed, the same in both passes): the gradient along a random direction must match the
/// loss's finite difference. Needs `--features gpu` and a GPU, as above.
#[cfg(feature = "gpu")]
#[test]
fn fused_attention_with_dropout_has_the_finite_difference_gradient() {
    use burn::tensor::DeviceKind;
    use vitlab::model::MultiHeadAttention;

    let device = Device::wgpu(DeviceKind::DefaultDevice).autodiff();
    let config = VitConfig::seed()
        .with_dim(16)
        .with_heads(2)
        .with_dropout(0.5);
    // Every draw in the generator's turn (`seeded`): another test's seed between a seed and
    // its draws would change them.
    let normal = Distribution::Normal(0.0, 1.0);
    let (attention, weights, direction, input) = seeded(&device, 1, || {
        (
            MultiHeadAttention::new(&config, &device).train(),
            Tensor::<3>::random([2, 5, 16], normal, &device),
            Tensor::<3>::random([2, 5, 16], normal, &device),
            Tensor::<3>::random([2, 5, 16], normal, &device),
        )
    });
    // The same mask on every evaluation: the stream restarts from one seed.
    let loss = |input: Tensor<3>| {
        let (mixed, _) = seeded(&device, 7, || attention.attend(input));
        (mixed * weights.clone()).sum()
    };
    let analytic = {
        let tracked = input.clone().require_grad();
        let gradients = loss(tracked.clone()).backward();
        let gradient = tracked.grad(&gradients).unwrap();
        to_vec((gradient * direction.clone().inner()).sum())[0]
    };
    let step = 1e-2;
    let at = |sign: f32| to_vec(loss(input.clone() + direction.clone() * (sign * step)))[0];
    let numeric = (at(1.0) - at(-1.0)) / (2.0 * step);
    assert!(
        (analytic - numeric).abs() <= 1e-2 * numeric.abs().max(1.0),
        "analytic {analytic}, finite difference {numeric}"
    );
    // Dropout is on: without it the loss differs.
    let (kept, _) = attention.clone().valid().attend(input.clone().inner());
    let dropped = to_vec(loss(input.clone()))[0];
    let without = to_vec((kept * weights.inner()).sum())[0];
    assert!((dropped - without).abs() > 1e-3, "{dropped} vs {without}");
}
