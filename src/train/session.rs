//! A training run as the page drives it: fed chunk by chunk, stepped one batch at a time (the
//! caller reads the loss back, synchronously or not), evaluated on a test subset, paused,
//! saved and resumed. The step itself is [`Trainer::step`], the one `vit train` takes.

use burn::tensor::{Device, Int, Tensor};
use serde::{Deserialize, Serialize};

use super::{Evaluation, LrSchedule, OptimizerSettings, SplitMix64, Trainer};
use crate::data::{Augmentation, MnistSet, NUM_CLASSES};
use crate::model::{VisionTransformer, VitConfig, seed_randomness};

/// Everything a person chooses before pressing Train.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingPlan {
    pub config: VitConfig,
    pub epochs: usize,
    pub batch_size: usize,
    /// Peak learning rate.
    pub lr: f64,
    /// Linear warm-up then cosine decay; `None` keeps the rate constant (the seed's way).
    pub warmup_epochs: Option<f64>,
    /// AdamW weight decay; 0 is Adam.
    pub weight_decay: f32,
    pub label_smoothing: f32,
    pub augment: bool,
    pub seed: u64,
    /// Test images used for each evaluation (the first ones loaded).
    pub eval_images: usize,
    /// Evaluate every this many steps (and after every epoch); 0 = only after epochs.
    pub eval_every: usize,
}

impl TrainingPlan {
    /// The seed's model and recipe: Adam 1e-3, batch 64, constant rate, no augmentation.
    pub fn seed() -> Self {
        Self {
            config: VitConfig::seed(),
            epochs: 10,
            batch_size: 64,
            lr: 1e-3,
            warmup_epochs: None,
            weight_decay: 0.0,
            label_smoothing: 0.0,
            augment: false,
            seed: 42,
            eval_images: 2000,
            eval_every: 200,
        }
    }

    /// The shipped lab model's configuration and the recipe of its first 16 epochs (its later
    /// stages are in `pretrained/README.md`).
    pub fn lab() -> Self {
        Self {
            config: VitConfig::lab(),
            epochs: 16,
            batch_size: 128,
            lr: 2e-3,
            warmup_epochs: Some(0.3),
            weight_decay: 0.05,
            label_smoothing: 0.1,
            augment: true,
            seed: 7,
            eval_images: 2000,
            eval_every: 100,
        }
    }

    /// A preset by name, as the page and the CLI spell it.
    pub fn preset(name: &str) -> Option<Self> {
        match name {
            "seed" => Some(Self::seed()),
            "lab" => Some(Self::lab()),
            _ => None,
        }
    }

    /// Why this plan cannot run, if it cannot.
    pub fn validate(&self) -> Result<(), String> {
        self.config.validate().map_err(|e| e.to_string())?;
        if self.epochs == 0 || self.batch_size == 0 {
            return Err("epochs and batch size must be at least 1".into());
        }
        // 0 is allowed: a run that only measures, keeping the weights as they are.
        if !(self.lr.is_finite() && self.lr >= 0.0) {
            return Err(format!("the learning rate {} must be 0 or more", self.lr));
        }
        if !(0.0..1.0).contains(&self.label_smoothing) {
            return Err("label smoothing must be in [0, 1)".into());
        }
        if self.weight_decay < 0.0 || !self.weight_decay.is_finite() {
            return Err("weight decay must be 0 or more".into());
        }
        Ok(())
    }

    pub fn steps_per_epoch(&self, train_items: usize) -> usize {
        train_items.div_ceil(self.batch_size).max(1)
    }

    /// The learning-rate schedule over the whole run, `train_items` images an epoch.
    pub fn schedule(&self, train_items: usize) -> LrSchedule {
        let steps_per_epoch = self.steps_per_epoch(train_items);
        match self.warmup_epochs {
            Some(warmup) => LrSchedule {
                peak: self.lr,
                floor: self.lr * 1e-2,
                warmup_steps: (warmup * steps_per_epoch as f64) as usize,
                total_steps: self.epochs * steps_per_epoch,
            },
            None => LrSchedule::constant(self.lr),
        }
    }

    pub fn optimizer(&self) -> OptimizerSettings {
        OptimizerSettings {
            weight_decay: self.weight_decay,
            label_smoothing: self.label_smoothing,
        }
    }
}

/// One point of the loss and accuracy charts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepPoint {
    pub step: usize,
    pub loss: f32,
    pub smoothed_loss: f32,
    /// Smoothed training accuracy, 0..1.
    pub accuracy: f32,
}

/// One test evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EvalPoint {
    pub step: usize,
    pub accuracy: f32,
    /// Seconds of training before it.
    pub seconds: f64,
}

/// What the charts show, kept short: past [`History::MAX_POINTS`] every other old point goes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct History {
    pub steps: Vec<StepPoint>,
    pub evals: Vec<EvalPoint>,
}

impl History {
    pub const MAX_POINTS: usize = 1000;

    pub fn push_step(&mut self, point: StepPoint) {
        self.steps.push(point);
        if self.steps.len() > Self::MAX_POINTS {
            // Halve the resolution, keeping the newest point.
            let last = *self.steps.last().expect("not empty");
            self.steps = self.steps.iter().copied().step_by(2).collect();
            if self.steps.last() != Some(&last) {
                self.steps.push(last);
            }
        }
    }

    pub fn push_eval(&mut self, point: EvalPoint) {
        self.evals.push(point);
    }
}

/// What the page shows after a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    pub point: StepPoint,
    /// 1-based; the epoch this step belongs to.
    pub epoch: usize,
    pub epochs: usize,
    pub steps_per_epoch: usize,
    pub total_steps: usize,
    pub lr: f64,
    pub images_seen: usize,
    pub images_per_second: f64,
    /// Seconds spent training (pauses excluded).
    pub seconds: f64,
    pub seconds_left: f64,
}

/// A test evaluation with what the page shows of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestReport {
    pub point: EvalPoint,
    pub examples: usize,
    /// `confusion[label][predicted]`
    pub confusion: Vec<Vec<usize>>,
    pub mistakes: Vec<Mistake>,
}

/// A misclassified test digit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mistake {
    pub image: Vec<u8>,
    pub label: u8,
    pub predicted: u8,
}

/// Why training stopped on its own.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrainingError {
    #[error("the loss became {loss} at step {step}; training stopped (try a lower learning rate).")]
    NonFiniteLoss { step: usize, loss: f32 },
}

/// A step on its way: the tensors are still on the device.
pub struct PendingStep {
    pub loss: Tensor<1>,
    pub correct: Tensor<1, Int>,
    pub images: usize,
    pub lr: f64,
}

/// The part of a session that is not tensors, saved beside the model so a reload resumes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionState {
    pub plan: TrainingPlan,
    pub train_items: usize,
    pub step: usize,
    pub images_seen: usize,
    pub seconds: f64,
    pub shuffle_rng: u64,
    pub augment_rng: u64,
    pub smoothing: Smoothing,
    pub history: History,
}

/// Bias-corrected exponential moving averages (as TensorBoard smooths).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Smoothing {
    loss: f64,
    accuracy: f64,
    rate: f64,
    weight: f64,
}

impl Smoothing {
    const DECAY: f64 = 0.95;

    fn update(&mut self, loss: f64, accuracy: f64, images_per_second: f64) -> (f64, f64, f64) {
        self.loss = Self::DECAY * self.loss + (1.0 - Self::DECAY) * loss;
        self.accuracy = Self::DECAY * self.accuracy + (1.0 - Self::DECAY) * accuracy;
        self.rate = Self::DECAY * self.rate + (1.0 - Self::DECAY) * images_per_second;
        self.weight = Self::DECAY * self.weight + (1.0 - Self::DECAY);
        (
            self.loss / self.weight,
            self.accuracy / self.weight,
            self.rate / self.weight,
        )
    }
}

/// A model in training with its data, schedule and metrics.
pub struct Session {
    pub plan: TrainingPlan,
    trainer: Trainer,
    schedule: LrSchedule,
    train_items: usize,
    train: MnistSet,
    test: MnistSet,
    /// What is left of the current pass over the loaded images, taken from the end.
    order: Vec<usize>,
    shuffle_rng: SplitMix64,
    augment_rng: SplitMix64,
    augmentation: Option<Augmentation>,
    images_seen: usize,
    seconds: f64,
    smoothing: Smoothing,
    pub history: History,
}

impl Session {
    /// A fresh model for `plan`; an epoch is `train_items` images (the whole training split,
    /// whether it has arrived yet or not).
    pub fn new(plan: TrainingPlan, train_items: usize, device: &Device) -> Result<Self, String> {
        plan.validate()?;
        seed_randomness(device, plan.seed);
        let model = plan.config.init(device);
        let mut trainer = Trainer::new(model, plan.config.clone(), plan.optimizer(), device);
        trainer.seed = plan.seed;
        let state = SessionState {
            train_items,
            step: 0,
            images_seen: 0,
            seconds: 0.0,
            shuffle_rng: plan.seed,
            augment_rng: SplitMix64::for_augmentation(plan.seed).state(),
            smoothing: Smoothing::default(),
            history: History::default(),
            plan,
        };
        Ok(Self::from_parts(trainer, state))
    }

    /// Continues a saved session from weights alone; the optimiser's moments start afresh.
    pub fn resume_from_model(
        state: SessionState,
        model: VisionTransformer,
        device: &Device,
    ) -> Result<Self, String> {
        state.plan.validate()?;
        let mut trainer = Trainer::new(
            model,
            state.plan.config.clone(),
            state.plan.optimizer(),
            device,
        );
        trainer.step = state.step;
        trainer.seed = state.plan.seed;
        Ok(Self::from_parts(trainer, state))
    }

    fn from_parts(mut trainer: Trainer, state: SessionState) -> Self {
        trainer.step = state.step;
        Self {
            schedule: state.plan.schedule(state.train_items),
            augmentation: state.plan.augment.then(Augmentation::default),
            plan: state.plan,
            trainer,
            train_items: state.train_items,
            train: MnistSet::default(),
            test: MnistSet::default(),
            order: Vec::new(),
            shuffle_rng: SplitMix64::new(state.shuffle_rng),
            augment_rng: SplitMix64::new(state.augment_rng),
            images_seen: state.images_seen,
            seconds: state.seconds,
            smoothing: state.smoothing,
            history: state.history,
        }
    }

    /// Moves the loaded images over from `other` (a session being replaced).
    pub fn take_data_from(&mut self, other: &mut Session) {
        self.train = std::mem::take(&mut other.train);
        self.test = std::mem::take(&mut other.test);
        self.order = (0..self.train.len()).collect();
        self.shuffle_rng.shuffle(&mut self.order);
    }

    /// What to save besides the model.
    pub fn state(&self) -> SessionState {
        SessionState {
            plan: self.plan.clone(),
            train_items: self.train_items,
            step: self.trainer.step,
            images_seen: self.images_seen,
            seconds: self.seconds,
            shuffle_rng: self.shuffle_rng.state(),
            augment_rng: self.augment_rng.state(),
            smoothing: self.smoothing,
            history: self.history.clone(),
        }
    }

    /// Training images join the pass under way as they arrive.
    pub fn add_train(&mut self, set: &MnistSet) {
        let start = self.train.len();
        self.train.extend(set);
        self.order.extend(start..self.train.len());
        self.shuffle_rng.shuffle(&mut self.order);
    }

    pub fn add_test(&mut self, set: &MnistSet) {
        self.test.extend(set);
    }

    pub fn train_loaded(&self) -> usize {
        self.train.len()
    }

    pub fn step(&self) -> usize {
        self.trainer.step
    }

    pub fn steps_per_epoch(&self) -> usize {
        self.plan.steps_per_epoch(self.train_items)
    }

    pub fn total_steps(&self) -> usize {
        self.plan.epochs * self.steps_per_epoch()
    }

    pub fn is_finished(&self) -> bool {
        self.step() >= self.total_steps()
    }

    /// Whether the step just recorded ends an epoch or an evaluation interval.
    pub fn evaluation_due(&self) -> bool {
        let step = self.step();
        step > 0
            && (step.is_multiple_of(self.steps_per_epoch())
                || (self.plan.eval_every > 0 && step.is_multiple_of(self.plan.eval_every))
                || self.is_finished())
    }

    /// Starts the next step; `None` until training images arrive or once the plan is done.
    pub fn begin_step(&mut self) -> Option<PendingStep> {
        if self.train.is_empty() || self.is_finished() {
            return None;
        }
        let batch_size = self.plan.batch_size.min(self.train.len());
        if self.order.len() < batch_size {
            // A new pass, reshuffled; what is left of the old one is taken first (from the end).
            let mut next: Vec<usize> = (0..self.train.len()).collect();
            self.shuffle_rng.shuffle(&mut next);
            next.append(&mut self.order);
            self.order = next;
        }
        let indices = self.order.split_off(self.order.len() - batch_size);
        let device = self.trainer.device().clone();
        let batch = match &self.augmentation {
            Some(augmentation) => {
                self.train
                    .augmented_batch(&indices, augmentation, &mut self.augment_rng, &device)
            }
            None => self.train.batch(&indices, &device),
        };
        let lr = self.schedule.at(self.trainer.step);
        let output = self.trainer.step(&batch, lr);
        Some(PendingStep {
            loss: output.loss,
            correct: output.correct,
            images: batch_size,
            lr,
        })
    }

    /// Books a finished step: its loss and correct count as read back, and how long it took.
    pub fn finish_step(
        &mut self,
        pending: &PendingStep,
        loss: f32,
        correct: i64,
        seconds: f64,
    ) -> Result<StepReport, TrainingError> {
        if !loss.is_finite() {
            return Err(TrainingError::NonFiniteLoss {
                step: self.step(),
                loss,
            });
        }
        self.images_seen += pending.images;
        self.seconds += seconds;
        let accuracy = correct as f64 / pending.images as f64;
        let rate = pending.images as f64 / seconds.max(1e-6);
        let (smoothed_loss, smoothed_accuracy, smoothed_rate) =
            self.smoothing.update(loss as f64, accuracy, rate);
        let point = StepPoint {
            step: self.step(),
            loss,
            smoothed_loss: smoothed_loss as f32,
            accuracy: smoothed_accuracy as f32,
        };
        self.history.push_step(point);
        let steps_left = self.total_steps().saturating_sub(self.step());
        Ok(StepReport {
            point,
            epoch: ((self.step().max(1) - 1) / self.steps_per_epoch() + 1).min(self.plan.epochs),
            epochs: self.plan.epochs,
            steps_per_epoch: self.steps_per_epoch(),
            total_steps: self.total_steps(),
            lr: pending.lr,
            images_seen: self.images_seen,
            images_per_second: smoothed_rate,
            seconds: self.seconds,
            seconds_left: (steps_left * self.plan.batch_size) as f64 / smoothed_rate.max(1e-6),
        })
    }

    /// The model for inference as it is now: no autodiff, no dropout.
    pub fn inference_model(&self) -> VisionTransformer {
        self.trainer.inference_model()
    }

    /// The inference device (no autodiff) the model runs on.
    pub fn device(&self) -> Device {
        self.trainer.device().clone().inner()
    }

    /// Batches of test indices for one evaluation.
    pub fn evaluation_batches(&self, batch_size: usize) -> Vec<Vec<usize>> {
        let count = self.plan.eval_images.min(self.test.len());
        (0..count)
            .collect::<Vec<_>>()
            .chunks(batch_size.max(1))
            .map(<[usize]>::to_vec)
            .collect()
    }

    pub fn test_set(&self) -> &MnistSet {
        &self.test
    }

    /// Books an evaluation: `predicted[i]` is the guess for `indices[i]`.
    pub fn finish_evaluation(&mut self, indices: &[usize], predicted: &[i64]) -> TestReport {
        let report = test_report(&self.test, indices, predicted, self.step(), self.seconds);
        self.history.push_eval(report.point);
        report
    }
}

/// Shown mistakes per evaluation.
pub const MAX_MISTAKES: usize = 24;

/// Accuracy, confusion matrix and the first mistakes of predictions on `set`.
pub fn test_report(
    set: &MnistSet,
    indices: &[usize],
    predicted: &[i64],
    step: usize,
    seconds: f64,
) -> TestReport {
    let labels: Vec<u8> = indices.iter().map(|&i| set.labels[i]).collect();
    let mut evaluation = Evaluation::new(NUM_CLASSES);
    evaluation.record(&labels, predicted);
    let mistakes = indices
        .iter()
        .zip(predicted)
        .filter(|&(&i, &guess)| set.labels[i] as i64 != guess)
        .take(MAX_MISTAKES)
        .map(|(&i, &guess)| Mistake {
            image: set.image(i).to_vec(),
            label: set.labels[i],
            predicted: guess as u8,
        })
        .collect();
    TestReport {
        point: EvalPoint {
            step,
            accuracy: evaluation.accuracy() as f32,
            seconds,
        },
        examples: evaluation.examples,
        confusion: evaluation.confusion,
        mistakes,
    }
}
