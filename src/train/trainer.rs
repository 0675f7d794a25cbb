//! One optimiser step, written once for every device: the native CLI and the browser's worker
//! call the same [`Trainer::step`].

use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::{Device, Int, Tensor};

use super::OptimizerSettings;
use super::objective::{BatchGradients, Objective, Teacher, batch_gradients, cross_entropy};
use super::optimizer::{AdamW, Moments};
use super::shard_job::{ShardHelper, ShardJob, parameter_values};
use super::shards::{Shard, add_in_order, in_shards, shard_count, shard_of_batch};
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
    /// How many workers computed the step's shards: this one, and the helpers whose shards
    /// came back ([`Trainer::step_with`]).
    pub workers: usize,
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
        let shards = shard_count(batch.images.dims()[0], &self.device);
        let gradients = if shards > 1 {
            in_shards(&model, batch, objective, stream, shards)
        } else {
            batch_gradients(
                &model,
                batch.images.clone(),
                batch.labels.clone(),
                objective,
                1.0,
            )
        };
        self.finish_step(model, gradients, lr, 1)
    }

    /// [`Trainer::step`], its shards dealt out between this thread and the `helpers` that are
    /// ready (the first `shards − 1` of them): worker `w` of `n` takes shards `w`, `w + n`, …,
    /// this thread being worker 0. The same step, bit for bit, whoever computed what: where a
    /// helper fails, this thread computes its shards too.
    pub async fn step_with<H: ShardHelper>(
        &mut self,
        batch: &Batch,
        lr: f64,
        helpers: &[H],
    ) -> StepOutput {
        let images = batch.images.dims()[0];
        let count = shard_count(images, &self.device);
        let ready: Vec<&H> = helpers
            .iter()
            .filter(|helper| helper.is_ready())
            .take(count.saturating_sub(1))
            .collect();
        if ready.is_empty() || self.teacher.is_some() {
            return self.step(batch, lr);
        }
        let workers = ready.len() + 1;
        let dealt = |worker: usize| -> Vec<Shard> {
            Shard::all(count).skip(worker).step_by(workers).collect()
        };
        let (model, stream) = self.begin_step();
        let objective = self.objective();
        let params = parameter_values(&model);
        let handed: Vec<_> = ready
            .iter()
            .enumerate()
            .map(|(at, helper)| {
                let shards = dealt(at + 1);
                let job = ShardJob::of(params.clone(), batch, objective, stream, &shards);
                (helper, shards, helper.hand_over(job))
            })
            .collect();
        drop(params);
        let here = |shard| shard_of_batch(&model, batch, objective, stream, shard);
        let mut each: Vec<Option<BatchGradients>> = (0..count).map(|_| None).collect();
        for shard in dealt(0) {
            each[shard.index] = Some(here(shard));
        }
        let mut helped = 1;
        for (helper, shards, outcome) in handed {
            let outcome = outcome
                .await
                .and_then(|done| done.into_batch_gradients(&model, &self.device, &shards));
            let computed = match outcome {
                Ok(computed) => {
                    helped += 1;
                    computed
                }
                Err(error) => {
                    helper.give_up(error);
                    shards.iter().map(|&shard| here(shard)).collect()
                }
            };
            for (shard, gradients) in shards.iter().zip(computed) {
                each[shard.index] = Some(gradients);
            }
        }
        let each = each
            .into_iter()
            .map(|shard| shard.expect("every shard was dealt to a worker"))
            .collect();
        let gradients = add_in_order(&model, each);
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
        workers: usize,
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
            workers,
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
