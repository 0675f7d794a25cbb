use vitlab::data::MnistSet;
use vitlab::model::seed_randomness;
use vitlab::model::{Classifier, CnnConfig, ModelConfig, VitConfig};
use vitlab::native;
use vitlab::rng::SplitMix64;
use vitlab::train::{LrSchedule, OptimizerSettings, Trainer, cross_entropy};
use vitlab::weights;

use crate::{device, to_vec};

fn small_config() -> VitConfig {
    VitConfig::lab()
        .with_depth(2)
        .with_dim(32)
        .with_heads(4)
        .with_mlp_dim(64)
}

/// The ViT head's weights, as the trainer holds them now.
fn head_weights(trainer: &Trainer) -> Vec<f32> {
    let model = trainer.inference_model().into_vit().expect("a ViT");
    to_vec(model.head.weight.val())
}

pub fn first_train_images(count: usize) -> MnistSet {
    let dir = native::default_data_dir();
    let manifest = native::read_manifest(&dir).unwrap();
    native::load_chunk(&dir, &manifest.train[0])
        .unwrap()
        .slice(0..count)
}

#[test]
fn a_few_steps_lower_the_loss_on_real_digits() {
    let device = device();
    let config: ModelConfig = small_config().with_dropout(0.0).into();
    let set = first_train_images(128);
    let settings = OptimizerSettings::default();
    // In the generator's turn, as every seeded draw (`seeded`).
    let model = vitlab::model::seeded(&device, 7, || config.init(&device));
    let mut trainer = Trainer::new(model, config, settings, &device);
    let indices: Vec<usize> = (0..set.len()).collect();
    let batch = set.batch(&indices, trainer.device());
    let losses: Vec<f32> = (0..40)
        .map(|_| trainer.step(&batch, 3e-3).loss.into_scalar::<f32>())
        .collect();
    assert!(losses.iter().all(|loss| loss.is_finite()));
    assert!(losses[39] < 0.6 * losses[0], "{losses:?}");
    assert_eq!(trainer.step, 40);
}

#[test]
fn loaded_weights_keep_training() {
    let device = device();
    let config: ModelConfig = small_config().into();
    let set = first_train_images(64);
    let indices: Vec<usize> = (0..set.len()).collect();
    let bytes = weights::to_safetensors(&config.init(&device), &config);
    let (model, config) = weights::load(&bytes, &device.clone().autodiff()).unwrap();
    let mut trainer = Trainer::new(model, config, OptimizerSettings::default(), &device);
    let batch = set.batch(&indices, trainer.device());
    let before = head_weights(&trainer);
    trainer.step(&batch, 1e-3);
    let after = head_weights(&trainer);
    assert_ne!(before, after, "a loaded model must still receive gradients");
}

#[test]
fn label_smoothing_changes_the_target_not_the_argmax() {
    let device = device();
    let logits =
        burn::tensor::Tensor::<2>::from_floats([[4.0, 0.0, 0.0], [0.0, 3.0, 0.0]], &device);
    let labels = burn::tensor::Tensor::<1, burn::tensor::Int>::from_ints([0, 1], &device);
    let plain = cross_entropy(logits.clone(), labels.clone(), 0.0).into_scalar::<f32>();
    let smooth = cross_entropy(logits.clone(), labels.clone(), 0.1).into_scalar::<f32>();
    // Plain: mean of -log softmax at the label.
    let expected = (-(4.0f32.exp() / (4.0f32.exp() + 2.0)).ln()
        - (3.0f32.exp() / (3.0f32.exp() + 2.0)).ln())
        / 2.0;
    assert!((plain - expected).abs() < 1e-5, "{plain} vs {expected}");
    assert!(smooth > plain);
    // Smoothed: against the target 0.9·onehot + 0.1/3, written out.
    let rows = [([4.0f32, 0.0, 0.0], 0), ([0.0, 3.0, 0.0], 1)];
    let expected_smooth = rows
        .iter()
        .map(|(row, label)| {
            let total: f32 = row.iter().map(|v| v.exp()).sum();
            -(0..3)
                .map(|c| {
                    let target = if c == *label { 0.9 } else { 0.0 } + 0.1 / 3.0;
                    target * (row[c].exp() / total).ln()
                })
                .sum::<f32>()
        })
        .sum::<f32>()
        / 2.0;
    assert!(
        (smooth - expected_smooth).abs() < 1e-5,
        "{smooth} vs {expected_smooth}"
    );
}

#[test]
fn the_schedule_warms_up_then_decays_to_the_floor() {
    let schedule = LrSchedule {
        peak: 1e-3,
        floor: 1e-5,
        warmup_steps: 10,
        total_steps: 110,
    };
    assert!((schedule.at(0) - 1e-4).abs() < 1e-12);
    assert!((schedule.at(9) - 1e-3).abs() < 1e-12);
    assert!((schedule.at(60) - (1e-5 + (1e-3 - 1e-5) * 0.5)).abs() < 1e-9);
    assert!((schedule.at(110) - 1e-5).abs() < 1e-12);
    assert!(schedule.at(30) > schedule.at(31));
    assert_eq!(LrSchedule::constant(0.01).at(1234), 0.01);
}

#[test]
fn shuffles_are_seeded_permutations() {
    let mut a: Vec<usize> = (0..100).collect();
    let mut b = a.clone();
    SplitMix64::new(3).shuffle(&mut a);
    SplitMix64::new(3).shuffle(&mut b);
    assert_eq!(a, b);
    assert_ne!(a, (0..100).collect::<Vec<_>>());
    let mut sorted = a.clone();
    sorted.sort();
    assert_eq!(sorted, (0..100).collect::<Vec<_>>());
}

#[test]
fn a_resumed_trainer_continues_exactly() {
    let device = device();
    // With dropout: a resumed step must draw the same masks as the uninterrupted one.
    let config: ModelConfig = small_config().with_dropout(0.2).into();
    let set = first_train_images(32);
    let indices: Vec<usize> = (0..set.len()).collect();
    let settings = OptimizerSettings {
        weight_decay: 0.05,
        label_smoothing: 0.1,
    };
    let mut original = Trainer::new(config.init(&device), config.clone(), settings, &device);
    original.seed = 11;
    let batch = set.batch(&indices, original.device());
    for _ in 0..3 {
        original.step(&batch, 1e-3);
    }
    // What a checkpoint holds of a trainer: the weights as a file has them, and the moments.
    let saved = weights::to_safetensors(&original.inference_model(), &config);
    let model = weights::decode(&saved).unwrap().into_model(&device);
    let mut resumed =
        Trainer::new(model, config, settings, &device).with_moments(original.moments().to_vec());
    resumed.step = 3;
    resumed.seed = 11;
    assert_eq!(resumed.step, 3);
    // Whatever was drawn in between does not change step 4's masks.
    seed_randomness(&device, 99);
    let original_loss = original.step(&batch, 1e-3).loss.into_scalar::<f32>();
    let resumed_loss = resumed.step(&batch, 1e-3).loss.into_scalar::<f32>();
    assert_eq!(original_loss, resumed_loss);
    // Adam's moments came back too: a fresh optimiser would take a different step.
    let a = head_weights(&original);
    let b = head_weights(&resumed);
    let worst = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max);
    assert!(worst < 1e-6, "{worst}");
}

/// The GPU's AdamW is one kernel per parameter; the CPU's is Burn's `AdamW`. Three steps with
/// weight decay (the moments carried over, the bias corrections changing) must give the same
/// parameter and moments on both.
#[cfg(feature = "gpu")]
#[test]
fn the_gpu_optimiser_kernel_takes_burns_adamw_steps() {
    use burn::optim::Optimizer;
    use burn::tensor::{Device, DeviceKind, Distribution, Tensor};
    use vitlab::train::FusedAdamW;

    let cpu = device();
    let normal = Distribution::Normal(0.0, 1.0);
    let (start, gradients) = vitlab::model::seeded(&cpu, 5, || {
        let start = to_vec(Tensor::<1>::random([4096], normal, &cpu));
        let gradients: Vec<Vec<f32>> = (0..3)
            .map(|_| to_vec(Tensor::<1>::random([4096], normal, &cpu)))
            .collect();
        (start, gradients)
    });
    let optimizer = FusedAdamW::new(&OptimizerSettings {
        weight_decay: 0.05,
        label_smoothing: 0.0,
    });
    let run = |device: &Device| {
        let mut parameter = Tensor::<1>::from_floats(start.as_slice(), device);
        let mut state = None;
        for (step, gradient) in gradients.iter().enumerate() {
            let gradient = Tensor::<1>::from_floats(gradient.as_slice(), device);
            let lr = 1e-2 * (step + 1) as f64;
            (parameter, state) = optimizer.step(lr, parameter, gradient, state);
        }
        let momentum = state.unwrap().momentum;
        assert_eq!(momentum.time, 3);
        [parameter, momentum.moment_1, momentum.moment_2].map(to_vec)
    };
    let on_cpu = run(&cpu);
    let on_gpu = run(&Device::wgpu(DeviceKind::DefaultDevice));
    for (name, (cpu, gpu)) in ["parameter", "first moment", "second moment"]
        .iter()
        .zip(on_cpu.iter().zip(&on_gpu))
    {
        let worst = cpu
            .iter()
            .zip(gpu)
            .fold(0.0f32, |m, (a, b)| m.max((a - b).abs() / a.abs().max(1e-3)));
        assert!(worst <= 1e-4, "{name}: relative error {worst}");
    }
    let moved = on_cpu[0].iter().zip(&start).filter(|(a, b)| a != b).count();
    assert_eq!(moved, start.len(), "every parameter takes a step");
}

/// A checkpoint written while training on a GPU resumes on the CPU: the optimiser's moments
/// are plain tensors, read back and put on the other device.
#[cfg(feature = "gpu")]
#[test]
fn a_checkpoint_the_gpu_wrote_resumes_on_the_cpu() {
    use burn::tensor::{Device, DeviceKind, Tensor};

    let config: ModelConfig = small_config().with_dropout(0.0).into();
    let gpu = Device::wgpu(DeviceKind::DefaultDevice);
    let settings = OptimizerSettings::default();
    let mut trainer = Trainer::new(config.init(&gpu), config.clone(), settings, &gpu);
    let set = first_train_images(8);
    let indices: Vec<usize> = (0..8).collect();
    for _ in 0..2 {
        let batch = set.batch(&indices, trainer.device());
        trainer.step(&batch, 1e-3);
    }
    let cpu = device();
    let saved = weights::to_safetensors(&trainer.inference_model(), &config);
    let moved = |tensor: &Tensor<1>| Tensor::<1>::from_data(tensor.clone().into_data(), &cpu);
    let moments = trainer
        .moments()
        .iter()
        .map(|moments| {
            moments.as_ref().map(|m| vitlab::train::Moments {
                time: m.time,
                first: moved(&m.first),
                second: moved(&m.second),
            })
        })
        .collect();
    let model = weights::decode(&saved).unwrap().into_model(&cpu);
    let mut resumed = Trainer::new(model, config.clone(), settings, &cpu).with_moments(moments);
    resumed.step = 2;
    // What losing the moments would look like: the same weights, a fresh optimiser.
    let mut restarted = Trainer::new(resumed.inference_model(), config, settings, &cpu);
    let batch = set.batch(&indices, trainer.device());
    trainer.step(&batch, 1e-3);
    let batch = set.batch(&indices, resumed.device());
    resumed.step(&batch, 1e-3);
    restarted.step(&batch, 1e-3);
    let distance = |a: &Trainer, b: &Trainer| {
        parameters(a.model())
            .iter()
            .flatten()
            .zip(parameters(b.model()).iter().flatten())
            .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()))
    };
    let (kept, lost) = (distance(&trainer, &resumed), distance(&trainer, &restarted));
    assert!(
        kept < 1e-4 && lost > 3e-4,
        "off by {kept} with the moments resumed, by {lost} without"
    );
}

/// Every parameter of `model`, flattened, in the module's order.
#[cfg(feature = "gpu")]
fn parameters(model: &vitlab::model::Classifier) -> Vec<Vec<f32>> {
    use burn::module::{Module, ModuleVisitor, Param};
    use burn::tensor::Tensor;
    struct Collect(Vec<Vec<f32>>);
    impl ModuleVisitor for Collect {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.0
                .push(to_vec(param.val().inner().flatten::<1>(0, D - 1)));
        }
    }
    let mut collect = Collect(Vec::new());
    model.visit(&mut collect);
    collect.0
}

/// A step of the CPU cuts its batch into shards that run side by side (`train/shards.rs`):
/// their summed gradients and losses must be the whole batch's.
#[test]
fn a_batch_in_shards_has_the_whole_batch_s_loss_and_gradients() {
    let training = device().autodiff();
    seed_randomness(&training, 4);
    // Both architectures: neither mixes the images of a batch.
    let models: [ModelConfig; 2] = [
        small_config().with_dropout(0.0).into(),
        CnnConfig::new()
            .with_widths(vec![4, 8])
            .with_hidden(16)
            .with_dropout(0.0)
            .into(),
    ];
    for config in models {
        let model = config.init(&training);
        shards_add_up(&model, &training);
    }
}

fn shards_add_up(model: &Classifier, training: &burn::tensor::Device) {
    use burn::module::{Module, ModuleVisitor, Param};
    use burn::tensor::Tensor;
    use vitlab::train::{Objective, in_shards, parameter_gradients, shard_count};

    struct InOrder<'a> {
        gradients: &'a burn::optim::GradientsParams,
        found: Vec<Vec<f32>>,
    }
    impl ModuleVisitor for InOrder<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            let gradient = self
                .gradients
                .get::<D>(param.id)
                .expect("every parameter's gradient");
            self.found.push(to_vec(gradient.flatten::<1>(0, D - 1)));
        }
    }
    let set = first_train_images(37);
    let indices: Vec<usize> = (0..37).collect();
    let batch = set.batch(&indices, training);
    // Shards of 16 images or more, 8 at most: 37 images make 2, 31 run whole, 64 make 4,
    // 200 make 8.
    assert_eq!(
        [37, 31, 32, 64, 200].map(|images| shard_count(images, training)),
        [2, 1, 2, 4, 8]
    );
    let objective = Objective {
        smoothing: 0.0,
        teacher: None,
    };
    let shards = in_shards(model, &batch, objective, 9, 2);
    let mut in_order = InOrder {
        gradients: &shards.gradients,
        found: Vec::new(),
    };
    model.visit(&mut in_order);
    let whole: Vec<Vec<f32>> = parameter_gradients(model, &batch)
        .into_iter()
        .map(to_vec)
        .collect();
    assert_eq!(in_order.found.len(), whole.len());
    for (index, (shards, whole)) in in_order.found.iter().zip(&whole).enumerate() {
        let scale = whole.iter().fold(1e-6f32, |m, v| m.max(v.abs()));
        let worst = shards
            .iter()
            .zip(whole)
            .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
        assert!(
            worst <= 1e-5 * scale,
            "parameter {index}: {worst} against {scale}"
        );
    }
    let logits = model.forward(batch.images.clone());
    let loss = cross_entropy(logits, batch.labels.clone(), 0.0).into_scalar::<f32>();
    let shards_loss = shards.loss.into_scalar::<f32>();
    assert!(
        (shards_loss - loss).abs() <= 1e-6 * loss.abs(),
        "{shards_loss} against {loss}"
    );
    assert_eq!(shards.correct.into_scalar::<i64>() as usize, {
        let logits = model.forward(batch.images.clone());
        vitlab::train::count_correct(logits, batch.labels.clone()).into_scalar::<i64>() as usize
    });
}
