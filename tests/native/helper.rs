//! The second half of a CPU step computed by a helper (the browser's second worker,
//! `web/helper`): handed over as bytes, computed on a model of the helper's own, handed back
//! as bytes, it must give the step the worker would have taken alone, bit for bit, and a
//! helper that fails or lies must cost nothing but the time.

use std::cell::{Cell, RefCell};
use std::future::{Future, ready};

use burn::module::Module;
use burn::tensor::Device;
use vitlab::data::Batch;
use vitlab::model::{CnnConfig, ModelConfig, VitConfig};
use vitlab::protocol::{BytesError, PartsError};
use vitlab::train::{
    HalfDone, HalfHelper, HalfJob, HalfJobError, Objective, OptimizerSettings, Trainer,
    parameter_values,
};

use crate::train::first_train_images;
use crate::{device, run_now};

fn small_vit() -> ModelConfig {
    VitConfig::lab()
        .with_depth(2)
        .with_dim(32)
        .with_heads(4)
        .with_mlp_dim(64)
        .with_dropout(0.1)
        .into()
}

fn small_cnn() -> ModelConfig {
    CnnConfig::new()
        .with_widths(vec![4, 8])
        .with_hidden(16)
        .with_dropout(0.25)
        .into()
}

/// What a helper might do with a job.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Behaviour {
    /// Compute it as the browser's helper does: through bytes, on a model of its own.
    Honest,
    /// Answer that it could not.
    Fail,
    /// Send back one gradient value too few.
    Truncate,
}

/// A helper in this process: each job goes through the bytes the workers exchange.
struct InProcess {
    config: ModelConfig,
    behaviour: Behaviour,
    jobs: Cell<usize>,
    given_up: RefCell<Option<HalfJobError>>,
}

impl InProcess {
    fn new(config: &ModelConfig, behaviour: Behaviour) -> Self {
        Self {
            config: config.clone(),
            behaviour,
            jobs: Cell::new(0),
            given_up: RefCell::new(None),
        }
    }
}

impl HalfHelper for InProcess {
    fn is_ready(&self) -> bool {
        self.given_up.borrow().is_none()
    }

    fn hand_over(&self, job: HalfJob) -> impl Future<Output = Result<HalfDone, HalfJobError>> {
        self.jobs.set(self.jobs.get() + 1);
        let (header, bytes) = job.into_parts();
        let header = serde_json::from_str(&serde_json::to_string(&header).unwrap()).unwrap();
        let outcome = HalfJob::from_parts(header, &bytes)
            .map_err(HalfJobError::from)
            .and_then(|job| {
                // A model of the helper's own: other random values, replaced by the job's.
                let model = self.config.init(&device()).train();
                job.run(model, &self.config, &device().autodiff())
            });
        let outcome = match (self.behaviour, outcome) {
            (Behaviour::Honest, outcome) => outcome.map(|done| {
                let (header, bytes) = done.into_parts();
                let header = serde_json::from_str(&serde_json::to_string(&header).unwrap());
                HalfDone::from_parts(header.unwrap(), &bytes).unwrap()
            }),
            (Behaviour::Fail, _) => Err(HalfJobError::Damaged("it stopped".into())),
            (Behaviour::Truncate, outcome) => outcome.map(|mut done| {
                done.gradients.pop();
                done
            }),
        };
        ready(outcome)
    }

    fn give_up(&self, error: HalfJobError) {
        *self.given_up.borrow_mut() = Some(error);
    }
}

/// Trains `config`'s model (the same start) for a few steps alone and with `helper`; the
/// parameters after each step, alone and with the helper.
fn train_both(config: &ModelConfig, helper: &InProcess) -> (Vec<Vec<f32>>, Vec<Vec<f32>>) {
    let start = config.init(&device());
    let set = first_train_images(80);
    let trainer = || {
        let mut trainer = Trainer::new(
            start.clone(),
            config.clone(),
            OptimizerSettings {
                weight_decay: 0.01,
                label_smoothing: 0.1,
            },
            &device(),
        );
        trainer.seed = 5;
        trainer
    };
    let (mut alone, mut helped) = (trainer(), trainer());
    let mut after = (Vec::new(), Vec::new());
    for step in 0..3 {
        let indices: Vec<usize> = (step * 20..step * 20 + 40).collect();
        let batch = set.batch(&indices, alone.device());
        alone.step(&batch, 1e-3);
        run_now(helped.step_with(&batch, 1e-3, helper));
        after.0.push(parameter_values(alone.model()));
        after.1.push(parameter_values(helped.model()));
    }
    after
}

#[test]
fn a_step_whose_second_half_a_helper_computes_is_the_step_computed_alone_bit_for_bit() {
    for config in [small_vit(), small_cnn()] {
        let helper = InProcess::new(&config, Behaviour::Honest);
        let (alone, helped) = train_both(&config, &helper);
        assert_eq!(helper.jobs.get(), 3, "every step handed its half over");
        assert!(helper.given_up.borrow().is_none());
        assert_ne!(alone[0], alone[2], "the model trained");
        for (step, (alone, helped)) in alone.iter().zip(&helped).enumerate() {
            let differ = alone
                .iter()
                .zip(helped)
                .filter(|(a, b)| a.to_bits() != b.to_bits());
            assert_eq!(differ.count(), 0, "step {step} of {config:?}");
        }
    }
}

#[test]
fn a_helper_that_fails_or_sends_a_damaged_half_is_given_up_and_costs_nothing() {
    let config = small_vit();
    for behaviour in [Behaviour::Fail, Behaviour::Truncate] {
        let helper = InProcess::new(&config, behaviour);
        let (alone, helped) = train_both(&config, &helper);
        assert_eq!(alone, helped, "{behaviour:?}");
        assert_eq!(
            helper.jobs.get(),
            1,
            "{behaviour:?}: no job after it was given up"
        );
        let error = helper.given_up.borrow().clone().expect("given up");
        assert!(matches!(error, HalfJobError::Damaged(_)), "{error:?}");
    }
}

/// A batch of `images` training digits on the training device.
fn batch(images: usize) -> (Batch, Device) {
    let training = device().autodiff();
    let set = first_train_images(images);
    let indices: Vec<usize> = (0..images).collect();
    (set.batch(&indices, &training), training)
}

fn job(config: &ModelConfig, images: usize) -> HalfJob {
    let (batch, training) = batch(images);
    let model = config.init(&training).train();
    let objective = Objective {
        smoothing: 0.0,
        teacher: None,
    };
    HalfJob::second_half_of(&model, &batch, objective, 3)
}

#[test]
fn a_job_is_the_second_half_and_damaged_or_mismatched_jobs_are_refused_by_name() {
    let config = small_vit();
    let job = job(&config, 37);
    // The second half of an odd batch is the larger one; its share counts it so.
    assert_eq!(job.header.image_shape, [19, 1, 28, 28]);
    assert_eq!(job.header.labels.len(), 19);
    assert_eq!(job.header.share, 19.0 / 37.0);
    assert_eq!(job.params.len(), config.num_params());
    let run = |job: HalfJob, config: &ModelConfig| {
        let model = config.init(&device()).train();
        job.run(model, config, &device().autodiff())
    };

    let (header, bytes) = job.clone().into_parts();
    let short = HalfJob::from_parts(header.clone(), &bytes[..bytes.len() - 4]);
    assert!(
        matches!(short, Err(PartsError::Bytes(BytesError::WrongCount { .. }))),
        "{short:?}"
    );
    let ragged = HalfJob::from_parts(header.clone(), &bytes[..bytes.len() - 1]);
    assert!(
        matches!(ragged, Err(PartsError::Bytes(BytesError::Ragged { .. }))),
        "{ragged:?}"
    );
    let mut huge = header.clone();
    huge.image_shape = [usize::MAX, 2, 28, 28];
    assert_eq!(
        HalfJob::from_parts(huge, &bytes),
        Err(PartsError::Uncountable([usize::MAX, 2, 28, 28]))
    );

    let other_model = small_cnn();
    let mismatch = run(job.clone(), &other_model);
    assert!(
        matches!(mismatch, Err(HalfJobError::WrongLength { .. })),
        "{mismatch:?}"
    );
    let mut bad_label = job.clone();
    bad_label.header.labels[4] = 10;
    assert_eq!(run(bad_label, &config), Err(HalfJobError::BadLabel(10, 10)));
    let mut negative = job.clone();
    negative.header.labels[0] = -1;
    assert_eq!(run(negative, &config), Err(HalfJobError::BadLabel(-1, 10)));
    for (share, smoothing) in [
        (0.0, 0.0),
        (1.5, 0.0),
        (f64::NAN, 0.0),
        (0.5, 1.0),
        (0.5, -0.1),
    ] {
        let mut odd = job.clone();
        (odd.header.share, odd.header.smoothing) = (share, smoothing);
        assert!(matches!(
            run(odd, &config),
            Err(HalfJobError::OutOfRange { .. })
        ));
    }
    let mut few_labels = job.clone();
    few_labels.header.labels.pop();
    assert!(matches!(
        run(few_labels, &config),
        Err(HalfJobError::LabelsMismatch { .. })
    ));
    let mut wrong_side = job.clone();
    wrong_side.header.image_shape = [19, 1, 14, 56];
    assert!(matches!(
        run(wrong_side, &config),
        Err(HalfJobError::WrongImages { .. })
    ));

    let done = run(job, &config).expect("an honest job runs");
    assert!(done.header.loss.is_finite() && done.header.loss > 0.0);
    assert!((0..=19).contains(&done.header.correct));
    assert_eq!(done.gradients.len(), config.num_params());
    let training = device().autodiff();
    let model = config.init(&training).train();
    for cut in [1, done.gradients.len()] {
        let mut short = done.clone();
        short.gradients.truncate(done.gradients.len() - cut);
        let error = short.into_batch_gradients(&model, &training).err();
        assert!(matches!(error, Some(HalfJobError::Damaged(_))), "{error:?}");
    }
    let mut long = done.clone();
    long.gradients.push(0.0);
    assert!(long.into_batch_gradients(&model, &training).is_err());
    let mut fewer = done.clone();
    fewer.header.present.pop();
    assert!(fewer.into_batch_gradients(&model, &training).is_err());
    assert!(done.into_batch_gradients(&model, &training).is_ok());
}
