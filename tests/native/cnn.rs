//! The CNN beside the ViT (its shape, its weights, its training) and distillation.

use burn::module::Module;
use burn::tensor::{Int, Tensor};
use vitlab::model::{Architecture, Budget, CnnConfig, ConfigError, ModelConfig, VitConfig};
use vitlab::train::{
    Distillation, DistillationKind, PlanError, Session, TrainingPlan, cross_entropy,
};
use vitlab::weights;

use crate::{device, sample_images, to_vec};

fn scalar(tensor: Tensor<1>) -> f32 {
    to_vec(tensor)[0]
}

#[test]
fn the_seed_cnn_is_the_size_of_the_seed_vit_and_counts_its_parameters_without_building() {
    let config = CnnConfig::seed();
    let model = config.init(&device());
    assert_eq!(model.num_params(), 204_330);
    assert_eq!(ModelConfig::from(config.clone()).num_params(), 204_330);
    let vit = VitConfig::seed().num_params();
    assert!(vit.abs_diff(204_330) < 1_000, "{vit}");
    // 3×3 kernels after 1, 2 and 4 pixels of stride: 3, 8 and 18 pixels.
    assert_eq!(config.receptive_fields(), vec![3, 8, 18]);
    let logits = model.forward(sample_images(3, 28, &device()));
    assert_eq!(logits.dims(), [3, 10]);
}

#[test]
fn cnn_configs_that_cannot_work_are_refused_by_name() {
    let refused = |config: CnnConfig| ModelConfig::from(config).validate().unwrap_err();
    assert_eq!(
        refused(CnnConfig::new().with_kernel_size(4)),
        ConfigError::EvenKernel(4)
    );
    assert_eq!(
        refused(CnnConfig::new().with_widths(vec![8, 0])),
        ConfigError::ZeroWidth(1)
    );
    assert!(matches!(
        refused(CnnConfig::new().with_widths(vec![8; 5])),
        ConfigError::PooledAway { layers: 5, .. }
    ));
    assert_eq!(
        refused(CnnConfig::new().with_widths(vec![])),
        ConfigError::Zero("widths")
    );
    let huge = CnnConfig::new().with_widths(vec![usize::MAX / 2, usize::MAX / 2]);
    assert!(
        ModelConfig::from(huge)
            .check_budget(&Budget::CLI, Some(64))
            .is_err()
    );
}

/// A CNN's file names its tensors as `tools/seed_cnn.py`'s `state_dict` does, carries its
/// config, and reads back as the same model.
#[test]
fn a_cnn_s_weights_round_trip_with_pytorch_s_names() {
    let config: ModelConfig = CnnConfig::seed().into();
    let model = config.init(&device());
    let bytes = weights::to_safetensors(&model, &config);
    let file = weights::decode(&bytes).unwrap();
    assert_eq!(file.config, config);
    assert_eq!(file.config.architecture(), Architecture::Cnn);
    let names: Vec<(&str, &[usize])> = file
        .tensors
        .iter()
        .map(|t| (t.name.as_str(), t.shape.as_slice()))
        .collect();
    assert_eq!(
        names,
        [
            ("convs.0.weight", &[32, 1, 3, 3][..]),
            ("convs.0.bias", &[32][..]),
            ("convs.1.weight", &[64, 32, 3, 3][..]),
            ("convs.1.bias", &[64][..]),
            ("convs.2.weight", &[128, 64, 3, 3][..]),
            ("convs.2.bias", &[128][..]),
            ("fc.weight", &[96, 1152][..]),
            ("fc.bias", &[96][..]),
            ("head.weight", &[10, 96][..]),
            ("head.bias", &[10][..]),
        ]
    );
    let images = sample_images(2, 28, &device());
    let again = file.into_model(&device());
    assert_eq!(
        to_vec(model.forward(images.clone())),
        to_vec(again.forward(images))
    );
    // A ViT's config is written as it always was: no `cnn` key.
    let vit: ModelConfig = VitConfig::seed().into();
    let json = serde_json::to_string(&vit).unwrap();
    assert!(json.starts_with("{\"image_size\":28"), "{json}");
    assert_eq!(serde_json::from_str::<ModelConfig>(&json).unwrap(), vit);
}

fn logits(rows: &[[f32; 3]]) -> Tensor<2> {
    let flat: Vec<f32> = rows.iter().flatten().copied().collect();
    Tensor::<1>::from_floats(flat.as_slice(), &device()).reshape([rows.len(), 3])
}

#[test]
fn soft_distillation_is_the_tempered_kl_divergence_and_nothing_when_the_student_agrees() {
    let soft = Distillation {
        kind: DistillationKind::Soft,
        temperature: 2.0,
        weight: 0.5,
    };
    let teacher = [[2.0, 0.0, -1.0], [0.5, 1.5, 0.0]];
    let same = scalar(soft.teacher_loss(logits(&teacher), logits(&teacher)));
    assert!(same.abs() < 1e-6, "{same}");
    // By hand: KL(p ‖ q) with p, q the softmax of logits / T, times weight · T².
    let student = [[0.0, 1.0, 0.0], [0.0, 0.0, 3.0]];
    let softmax = |row: &[f32; 3]| {
        let e: Vec<f64> = row.iter().map(|&x| (f64::from(x) / 2.0).exp()).collect();
        let sum: f64 = e.iter().sum();
        e.into_iter().map(move |x| x / sum).collect::<Vec<f64>>()
    };
    let expected: f64 = teacher
        .iter()
        .zip(&student)
        .map(|(t, s)| {
            let (p, q) = (softmax(t), softmax(s));
            p.iter().zip(&q).map(|(p, q)| p * (p / q).ln()).sum::<f64>()
        })
        .sum::<f64>()
        / 2.0
        * 0.5
        * 4.0;
    let ours = scalar(soft.teacher_loss(logits(&student), logits(&teacher)));
    assert!(
        (f64::from(ours) - expected).abs() < 1e-5,
        "{ours} vs {expected}"
    );
    assert_eq!(soft.label_share(), 0.5);
}

#[test]
fn hard_distillation_is_cross_entropy_against_the_teacher_s_guesses() {
    let hard = Distillation {
        kind: DistillationKind::Hard,
        temperature: 1.0,
        weight: 0.5,
    };
    let student = logits(&[[0.3, 1.0, -2.0], [1.0, 0.0, 0.5]]);
    // The teacher's guesses are classes 2 and 0.
    let teacher = logits(&[[0.0, 1.0, 5.0], [9.0, 0.0, 0.0]]);
    let guesses = Tensor::<1, Int>::from_ints([2, 0], &device());
    let expected = scalar(cross_entropy(student.clone(), guesses, 0.0)) * 0.5;
    let ours = scalar(hard.teacher_loss(student, teacher));
    assert!((ours - expected).abs() < 1e-6, "{ours} vs {expected}");
    assert_eq!(hard.label_share(), 0.5);
}

#[test]
fn distillation_settings_out_of_range_are_refused_and_the_page_cannot_distil() {
    let mut plan = TrainingPlan::seed();
    let settings = |temperature, weight| {
        Some(Distillation {
            kind: DistillationKind::Soft,
            temperature,
            weight,
        })
    };
    for (temperature, weight) in [(0.0, 0.5), (f32::NAN, 0.5), (1e9, 0.5), (2.0, 1.5)] {
        plan.distillation = settings(temperature, weight);
        assert!(
            plan.validate_within(&Budget::CLI).is_err(),
            "{temperature} {weight}"
        );
    }
    plan.distillation = settings(4.0, 0.5);
    plan.validate_within(&Budget::CLI).unwrap();
    assert_eq!(plan.validate(), Err(PlanError::NoTeacherHere("the page")));
}

/// A session whose plan distils takes no step until its teacher is given, and a session
/// whose plan does not refuses one.
#[test]
fn a_distilling_session_waits_for_its_teacher() {
    let device = device();
    let mut plan = TrainingPlan::seed();
    plan.config = CnnConfig::new().with_widths(vec![4]).with_hidden(8).into();
    plan.batch_size = 8;
    let set = crate::train::first_train_images(16);
    let mut plain = Session::new_within(plan.clone(), 16, &device, &Budget::CLI).unwrap();
    let teacher = plan.config.init(&device);
    assert_eq!(
        plain.set_teacher(teacher.clone()),
        Err(PlanError::NoDistillation)
    );
    plan.distillation = Some(Distillation {
        kind: DistillationKind::Hard,
        temperature: 1.0,
        weight: 0.5,
    });
    let mut session = Session::new_within(plan, 16, &device, &Budget::CLI).unwrap();
    session.add_train(&set);
    session.data_complete();
    assert!(!session.can_step() && !session.has_its_teacher());
    session.set_teacher(teacher).unwrap();
    assert!(session.can_step());
    let step = session.begin_step().unwrap();
    assert!(to_vec(step.loss)[0].is_finite());
}

/// A distilling run's checkpoint, offered to the page (which cannot give it its teacher), is
/// refused with a message that says how to continue it; `vit` reads it.
#[test]
fn the_page_refuses_a_distilling_checkpoint_and_says_how_to_continue_it() {
    let device = device();
    let mut plan = TrainingPlan::seed();
    plan.config = CnnConfig::new().with_widths(vec![4]).with_hidden(8).into();
    plan.distillation = Some(Distillation {
        kind: DistillationKind::Soft,
        temperature: 2.0,
        weight: 0.5,
    });
    let mut session = Session::new_within(plan.clone(), 16, &device, &Budget::CLI).unwrap();
    session.set_teacher(plan.config.init(&device)).unwrap();
    let bytes = session.checkpoint().encode();
    let Err(error) = vitlab::train::Checkpoint::decode(&bytes, &Budget::PAGE) else {
        panic!("the page took a checkpoint it cannot continue");
    };
    let error = error.to_string();
    assert!(error.contains("--teacher FILE --resume-from"), "{error}");
    assert!(vitlab::train::Checkpoint::decode(&bytes, &Budget::CLI).is_ok());
}
