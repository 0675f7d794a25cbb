//! A training run as the page drives it: fed chunk by chunk, stepped one batch at a time (the
//! caller reads the loss back, synchronously or not), evaluated on a test subset, paused,
//! saved and resumed. The step itself is [`Trainer::step`], the one `vit train` takes.

use std::collections::VecDeque;

use burn::tensor::{Device, Int, Tensor};

use super::optimizer::Moments;
use super::plan::PlanError;
use super::{
    CellDigits, History, LrSchedule, PersonalMix, SessionState, ShardHelper, Smoothing, StepOutput,
    StepPoint, StepReport, Teacher, TestReport, Trainer, TrainingPlan, test_report,
};
use crate::data::{Augmentation, Batch, MnistSet};
use crate::model::{Budget, Classifier, seed_randomness, seeded};
use crate::rng::SplitMix64;

/// Why training stopped on its own.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrainingError {
    #[error("the loss became {loss} at step {step}; training stopped (try a lower learning rate).")]
    NonFiniteLoss { step: usize, loss: f32 },
}

/// A step on its way: the tensors are still on the device. Several may be in flight before
/// their values are read back together (one readback for many steps); they are then finished
/// in the order they began.
pub struct PendingStep {
    pub loss: Tensor<1>,
    pub correct: Tensor<1, Int>,
    pub images: usize,
    pub lr: f64,
    /// The step count once this step is taken (1 for the first).
    pub step: usize,
    /// How many workers computed its shards ([`Session::begin_step_with`]).
    pub workers: usize,
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
    /// Images loaded when the run was saved: as they load again they take the places
    /// [`Session::order`] kept for them instead of joining the pass afresh, so a resumed run
    /// draws the batches of one never interrupted. Steps wait until they are all back.
    rejoining: usize,
    shuffle_rng: SplitMix64,
    augment_rng: SplitMix64,
    augmentation: Option<Augmentation>,
    images_seen: usize,
    seconds: f64,
    smoothing: Smoothing,
    pub history: History,
    /// The last evaluation's test images and guesses, for [`Session::cell_digits`]; not
    /// saved (a resumed run has none until it evaluates).
    last_evaluation: Option<(Vec<usize>, Vec<i64>, usize)>,
    /// Chunks offered ([`Session::offer_train`]) that have not joined the pass yet.
    arrivals: VecDeque<MnistSet>,
    /// No more chunks will be offered.
    complete: bool,
    /// Fed by [`Session::offer_train`], so on the join schedule (and waiting for it); a
    /// session fed by [`Session::add_train`] trains on what it has.
    scheduled: bool,
}

/// The page's data arrives chunk by chunk while the run trains. A chunk joins the pass at a
/// step set by how many images have joined, never by when it arrived, so a plan and its
/// seed draw the same batches however fast the network is: the run waits for a chunk that
/// is late. Every `JOIN_STEPS` steps the pass may take `JOIN_IMAGES` more images (a chunk
/// of the shipped data), so all of MNIST has joined by step 96.
pub const JOIN_STEPS: usize = 4;
pub const JOIN_IMAGES: usize = 2500;

impl Session {
    /// A fresh model for `plan`; an epoch is `train_items` images (the whole training split,
    /// whether it has arrived yet or not), or the plan's `train_limit` of them, and its mix's
    /// copies of a person's digits.
    pub fn new(plan: TrainingPlan, train_items: usize, device: &Device) -> Result<Self, PlanError> {
        Self::new_within(plan, train_items, device, &Budget::PAGE)
    }

    /// [`Session::new`] where `budget` holds (the command line's is larger).
    pub fn new_within(
        plan: TrainingPlan,
        train_items: usize,
        device: &Device,
        budget: &Budget,
    ) -> Result<Self, PlanError> {
        plan.validate_within(budget)?;
        let model = seeded(device, plan.seed, || plan.config.init(device));
        Self::from_model(plan, train_items, model, device)
    }

    /// A new run that starts from `model` (fine-tuning) rather than a fresh one, held to the
    /// command line's budget (the page checks its own first).
    pub fn from_model(
        plan: TrainingPlan,
        train_items: usize,
        model: Classifier,
        device: &Device,
    ) -> Result<Self, PlanError> {
        plan.validate_within(&Budget::CLI)?;
        seed_randomness(device, plan.seed);
        let mut trainer = Trainer::new(model, plan.config.clone(), plan.optimizer(), device);
        trainer.seed = plan.seed;
        let state = SessionState {
            train_items: plan.train_images(train_items),
            step: 0,
            images_seen: 0,
            seconds: 0.0,
            shuffle_rng: plan.seed,
            augment_rng: SplitMix64::for_augmentation(plan.seed).state(),
            smoothing: Smoothing::default(),
            history: History::default(),
            pass_left: Vec::new(),
            loaded: 0,
            plan,
        };
        Ok(Self::from_parts(trainer, state))
    }

    /// Continues a saved session from its model and AdamW's moments (by parameter position;
    /// empty to start them afresh).
    pub(crate) fn resume_with(
        state: SessionState,
        model: Classifier,
        moments: Vec<Option<Moments>>,
        device: &Device,
    ) -> Result<Self, PlanError> {
        state.plan.validate_within(&Budget::CLI)?;
        let mut trainer = Trainer::new(
            model,
            state.plan.config.clone(),
            state.plan.optimizer(),
            device,
        )
        .with_moments(moments);
        trainer.seed = state.plan.seed;
        Ok(Self::from_parts(trainer, state))
    }

    /// AdamW's state of each parameter, in module order.
    pub(crate) fn trainer_moments(&self) -> &[Option<Moments>] {
        self.trainer.moments()
    }

    fn from_parts(mut trainer: Trainer, state: SessionState) -> Self {
        trainer.step = state.step;
        let mix = state.plan.mix.as_deref().map(PersonalMix::to_set);
        let mut session = Self {
            schedule: state.plan.schedule(state.train_items),
            augmentation: state.plan.augment.then(Augmentation::default),
            plan: state.plan,
            trainer,
            train_items: state.train_items,
            train: MnistSet::default(),
            test: MnistSet::default(),
            order: state.pass_left,
            rejoining: state.loaded,
            shuffle_rng: SplitMix64::new(state.shuffle_rng),
            augment_rng: SplitMix64::new(state.augment_rng),
            images_seen: state.images_seen,
            seconds: state.seconds,
            smoothing: state.smoothing,
            history: state.history,
            last_evaluation: None,
            arrivals: VecDeque::new(),
            complete: false,
            // A mix's MNIST images join on the schedule from the first step, so that its
            // batches never depend on how fast they arrive.
            scheduled: mix.is_some(),
        };
        // A person's digits come first (a saved run's take back their places).
        if let Some(mix) = mix {
            session.add_train(&mix);
        }
        session
    }

    /// Moves the loaded images over from `other` (a session being replaced).
    pub fn take_data_from(&mut self, other: &mut Session) {
        let train = std::mem::take(&mut other.train);
        self.test = std::mem::take(&mut other.test);
        self.complete = other.complete;
        // A mix's digits are this session's already.
        let own = self.plan.mix_images().min(train.len());
        self.add_train(&train.slice(own..train.len()));
        for set in std::mem::take(&mut other.arrivals) {
            self.offer_train(set);
        }
    }

    /// No more images will arrive: the places kept for saved images that did not load again
    /// are given up, so the run goes on with what it has.
    pub fn data_complete(&mut self) {
        self.complete = true;
        let loaded = self.train.len();
        self.order.retain(|&index| index < loaded);
        self.rejoining = self.rejoining.min(loaded);
    }

    /// Whether a step can be taken: images are loaded, every image the saved pass kept a
    /// place for is back, and no chunk due to join now is still on its way.
    pub fn can_step(&self) -> bool {
        self.has_its_teacher()
            && !self.train.is_empty()
            && self.train.len() >= self.rejoining
            && !self.is_finished()
            && !self.waiting_for_a_chunk()
    }

    /// Whether the plan's teacher, if it has one, is here (see [`Session::set_teacher`]).
    pub fn has_its_teacher(&self) -> bool {
        self.plan.distillation.is_none() || self.trainer.teacher().is_some()
    }

    /// The model the plan's distillation learns from; refused for a plan without one.
    pub fn set_teacher(&mut self, model: Classifier) -> Result<(), PlanError> {
        let distillation = self.plan.distillation.ok_or(PlanError::NoDistillation)?;
        let teacher = Teacher::new(model, distillation, self.trainer.device());
        self.trainer.set_teacher(teacher);
        Ok(())
    }

    /// A chunk that arrived while the run trains (the page's way): it joins the pass at its
    /// step (see [`JOIN_STEPS`]); [`Session::add_train`] joins at once.
    pub fn offer_train(&mut self, set: MnistSet) {
        self.scheduled = true;
        self.arrivals.push_back(set);
        self.join_due();
    }

    /// The pass may take more images at this step (a saved run's own always).
    fn joining_open(&self) -> bool {
        self.train.len() < self.rejoining
            || self.mnist_loaded() <= (self.step() / JOIN_STEPS).saturating_mul(JOIN_IMAGES)
    }

    fn join_due(&mut self) {
        while self.joining_open()
            && let Some(set) = self.arrivals.pop_front()
        {
            self.add_train(&set);
        }
    }

    fn waiting_for_a_chunk(&self) -> bool {
        self.scheduled
            && self.arrivals.is_empty()
            && !self.complete
            && self.train.len() < self.train_items
            && self.joining_open()
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
            pass_left: self.order.clone(),
            // Before the saved images are all back, their places still count.
            loaded: self.train.len().max(self.rejoining),
        }
    }

    /// Training images join the pass under way as they arrive (those of a saved run take
    /// back the places it kept for them).
    ///
    /// Images past the run's `train_items` (a plan's `train_limit`) are left out.
    pub fn add_train(&mut self, set: &MnistSet) {
        let start = self.train.len();
        let room = self.train_items.saturating_sub(start);
        if set.len() > room {
            self.train.extend(&set.slice(0..room));
        } else {
            self.train.extend(set);
        }
        let fresh = start.max(self.rejoining)..self.train.len();
        if !fresh.is_empty() {
            self.order.extend(fresh);
            self.shuffle_rng.shuffle(&mut self.order);
        }
    }

    pub fn add_test(&mut self, set: &MnistSet) {
        self.test.extend(set);
    }

    pub fn train_loaded(&self) -> usize {
        self.train.len()
    }

    /// MNIST's training images loaded: those beside a mix's.
    pub fn mnist_loaded(&self) -> usize {
        self.train.len().saturating_sub(self.plan.mix_images())
    }

    pub fn step(&self) -> usize {
        self.trainer.step
    }

    /// Images an epoch takes: the split's, or the plan's `train_limit` of them, and its mix's.
    pub fn train_items(&self) -> usize {
        self.train_items
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

    /// Starts the next step; `None` until training images arrive (see
    /// [`Session::can_step`]) or once the plan is done.
    pub fn begin_step(&mut self) -> Option<PendingStep> {
        let (batch, lr) = self.next_batch()?;
        let output = self.trainer.step(&batch, lr);
        Some(self.stepped(output, &batch, lr))
    }

    /// [`Session::begin_step`], the step's shards dealt out to `helpers` where they can take
    /// them ([`Trainer::step_with`]): the same step, bit for bit.
    pub async fn begin_step_with<H: ShardHelper>(&mut self, helpers: &[H]) -> Option<PendingStep> {
        let (batch, lr) = self.next_batch()?;
        let output = self.trainer.step_with(&batch, lr, helpers).await;
        Some(self.stepped(output, &batch, lr))
    }

    /// The next step's batch (a new pass begins when the old one runs out) and learning rate;
    /// `None` when no step can be taken now.
    fn next_batch(&mut self) -> Option<(Batch, f64)> {
        if !self.can_step() {
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
        Some((batch, self.schedule.at(self.trainer.step)))
    }

    /// The step just taken on `batch`, pending its read-back.
    fn stepped(&mut self, output: StepOutput, batch: &Batch, lr: f64) -> PendingStep {
        // What is due at the next step joins before it draws.
        self.join_due();
        PendingStep {
            loss: output.loss,
            correct: output.correct,
            images: batch.images.dims()[0],
            lr,
            step: self.trainer.step,
            workers: output.workers,
        }
    }

    /// Books a finished step: its loss and correct count as read back, and how long it took.
    /// Steps begun together are finished in the order they began.
    pub fn finish_step(
        &mut self,
        pending: &PendingStep,
        loss: f32,
        correct: i64,
        seconds: f64,
    ) -> Result<StepReport, TrainingError> {
        let step = pending.step;
        if !loss.is_finite() {
            return Err(TrainingError::NonFiniteLoss { step, loss });
        }
        self.images_seen += pending.images;
        self.seconds += seconds;
        let accuracy = correct as f64 / pending.images as f64;
        let rate = pending.images as f64 / seconds.max(1e-6);
        let (smoothed_loss, smoothed_accuracy, smoothed_rate) =
            self.smoothing.update(loss as f64, accuracy, rate);
        let point = StepPoint {
            step,
            loss,
            smoothed_loss: smoothed_loss as f32,
            accuracy: smoothed_accuracy as f32,
        };
        self.history.push_step(point);
        let steps_left = self.total_steps().saturating_sub(step);
        Ok(StepReport {
            point,
            epoch: ((step.max(1) - 1) / self.steps_per_epoch() + 1).min(self.plan.epochs),
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
    pub fn inference_model(&self) -> Classifier {
        self.trainer.inference_model()
    }

    /// The inference device (no autodiff) the model runs on.
    pub fn device(&self) -> Device {
        self.trainer.device().clone().inner()
    }

    /// The test images one evaluation classifies (the plan's count, of those loaded).
    pub fn evaluation_indices(&self) -> Vec<usize> {
        (0..self.plan.eval_images.min(self.test.len())).collect()
    }

    pub fn test_set(&self) -> &MnistSet {
        &self.test
    }

    /// Books an evaluation: `predicted[i]` is the guess for `indices[i]`.
    pub fn finish_evaluation(&mut self, indices: &[usize], predicted: &[i64]) -> TestReport {
        let report = test_report(&self.test, indices, predicted, self.step(), self.seconds);
        self.history.push_eval(report.point);
        self.last_evaluation = Some((indices.to_vec(), predicted.to_vec(), self.step()));
        report
    }

    /// The digits of one cell of the last evaluation's confusion matrix; none before an
    /// evaluation, or for a digit that is not a class.
    pub fn cell_digits(&self, label: u8, predicted: u8) -> Option<CellDigits> {
        let classes = self.plan.config.num_classes();
        if usize::from(label) >= classes || usize::from(predicted) >= classes {
            return None;
        }
        let (indices, predictions, step) = self.last_evaluation.as_ref()?;
        Some(CellDigits::of(
            &self.test,
            indices,
            predictions,
            (label, predicted),
            *step,
        ))
    }
}
