//! One optimiser step, written once for every device: the native CLI and the browser's worker
//! call the same [`Trainer::step`].

use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::{Device, Int, Tensor};

use super::OptimizerSettings;
use super::half_job::{HalfHelper, HalfJob};
use super::objective::{BatchGradients, Objective, Teacher, batch_gradients, cross_entropy};
use super::optimizer::{AdamW, Moments};
use super::shards::{Half, add_halves, half_of_batch};
use crate::data::Batch;
use crate::model::{Classifier, ModelConfig, seed_randomness};
use crate::rng::step_seed;

/// What one step hands back, still on the device: read it synchronously natively and with
/// `into_data_async` in the browser.
pub struct StepOutput {
    /// `[1]`
    pub loss: Tensor<1>,
    /// `[1]`, correct predictions in the batch (before the update).
    pub correct: Tensor<1, Int>,
    /// Whether a helper computed half of the step ([`Trainer::step_with`]).
    pub helped: bool,
}

/// A model on an autodiff device and its optimiser state.
pub struct Trainer {
    /// Taken out only for the duration of an optimiser step.
    model: Option<Classifier>,
    pub config: ModelConfig,
    optimizer: AdamW,
    settings: OptimizerSettings,
    device: Device,
    /// Steps taken so far.
    pub step: usize,
    /// Step n's dropout draws from (seed, n) alone, so a run resumed from a checkpoint draws
    /// the same masks as one never interrupted.
    pub seed: u64,
    /// Where the plan distils, the model it learns from.
    teacher: Option<Teacher>,
}

impl Trainer {
    /// Starts from `model`, which is moved to the autodiff version of `device`.
    pub fn new(
        model: Classifier,
        config: ModelConfig,
        settings: OptimizerSettings,
        device: &Device,
    ) -> Self {
        let device = device.clone().autodiff();
        let optimizer = AdamW::new(&settings);
        Self {
            // Whatever device and mode the model comes in, it trains on `device`.
            model: Some(model.valid().to_device(&device.clone().inner()).train()),
            config,
            optimizer,
            settings,
            device,
            step: 0,
            seed: 0,
            teacher: None,
        }
    }

    /// Learns from `teacher`'s predictions as well as from the labels from now on.
    pub fn set_teacher(&mut self, teacher: Teacher) {
        self.teacher = Some(teacher);
    }

    pub fn teacher(&self) -> Option<&Teacher> {
        self.teacher.as_ref()
    }

    /// The autodiff device batches must live on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// One optimiser step on `batch` at learning rate `lr`.
    pub fn step(&mut self, batch: &Batch, lr: f64) -> StepOutput {
        let (model, stream) = self.begin_step();
        let objective = self.objective();
        let gradients = if super::shards::split_here(batch.images.dims()[0], &self.device) {
            super::shards::in_halves(&model, batch, objective, stream)
        } else {
            batch_gradients(
                &model,
                batch.images.clone(),
                batch.labels.clone(),
                objective,
                1.0,
            )
        };
        self.finish_step(model, gradients, lr, false)
    }

    /// [`Trainer::step`], its second half handed to `helper` where the batch splits in halves
    /// and the helper is ready, while this thread computes the first: the same step, bit for
    /// bit. Where the helper fails, this thread computes the second half too.
    pub async fn step_with(
        &mut self,
        batch: &Batch,
        lr: f64,
        helper: &impl HalfHelper,
    ) -> StepOutput {
        let images = batch.images.dims()[0];
        if !(helper.is_ready()
            && self.teacher.is_none()
            && super::shards::split_here(images, &self.device))
        {
            return self.step(batch, lr);
        }
        let (model, stream) = self.begin_step();
        let objective = self.objective();
        let job = HalfJob::second_half_of(&model, batch, objective, stream);
        let second = helper.hand_over(job);
        let first = half_of_batch(&model, batch, objective, stream, Half::First);
        let (second, helped) = match second
            .await
            .and_then(|done| done.into_batch_gradients(&model, &self.device))
        {
            Ok(second) => (second, true),
            Err(error) => {
                helper.give_up(error);
                let second = half_of_batch(&model, batch, objective, stream, Half::Second);
                (second, false)
            }
        };
        let gradients = add_halves(&model, first, second);
        self.finish_step(model, gradients, lr, helped)
    }

    /// The model, out for the step, and the step's stream (the randomness seeded from it).
    fn begin_step(&mut self) -> (Classifier, u64) {
        let model = self
            .model
            .take()
            .expect("the model is back after every step");
        let stream = step_seed(self.seed, self.step);
        seed_randomness(&self.device, stream);
        (model, stream)
    }

    fn objective(&self) -> Objective<'_> {
        Objective {
            smoothing: self.settings.label_smoothing,
            teacher: self.teacher.as_ref(),
        }
    }

    /// Updates `model` with the step's gradients and puts it back.
    fn finish_step(
        &mut self,
        model: Classifier,
        gradients: BatchGradients,
        lr: f64,
        helped: bool,
    ) -> StepOutput {
        let BatchGradients {
            loss,
            correct,
            gradients,
        } = gradients;
        self.model = Some(self.optimizer.step(lr, model, gradients));
        self.step += 1;
        StepOutput {
            loss,
            correct,
            helped,
        }
    }

    /// Continues with saved AdamW moments (by parameter position, as
    /// [`Trainer::moments`] gives them).
    pub fn with_moments(mut self, moments: Vec<Option<Moments>>) -> Self {
        self.optimizer = AdamW::with_moments(&self.settings, moments);
        self
    }

    /// AdamW's state of each parameter, in module order; empty before the first step.
    pub fn moments(&self) -> &[Option<Moments>] {
        self.optimizer.moments()
    }

    /// The model being trained, on the autodiff device.
    pub fn model(&self) -> &Classifier {
        self.model
            .as_ref()
            .expect("the model is back after every step")
    }

    /// The model for inference: no autodiff, no dropout.
    pub fn inference_model(&self) -> Classifier {
        self.model().valid()
    }
}

/// Every parameter's gradient of the cross-entropy of `model` on `batch`, flattened, in the
/// module's order: how the tests hold two devices' backward passes (Burn's ops on the CPU,
/// the fused kernels on a GPU) to each other. `model` must be on an autodiff device.
pub fn parameter_gradients(model: &Classifier, batch: &Batch) -> Vec<Tensor<1>> {
    struct Collect<'a> {
        gradients: &'a burn::tensor::Gradients,
        found: Vec<Tensor<1>>,
    }
    impl ModuleVisitor for Collect<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            if let Some(gradient) = param.val().grad(self.gradients) {
                self.found.push(gradient.flatten::<1>(0, D - 1));
            }
        }
    }
    let logits = model.forward(batch.images.clone()); // [B, C]
    let gradients = cross_entropy(logits, batch.labels.clone(), 0.0).backward();
    let mut collect = Collect {
        gradients: &gradients,
        found: Vec::new(),
    };
    model.visit(&mut collect);
    collect.found
}
