//! What a person chooses before pressing Train, and what it implies: the schedule, the
//! optimiser settings, the steps of an epoch.

use serde::{Deserialize, Serialize};

use super::{
    Distillation, DistillationError, LrSchedule, MixError, OptimizerSettings, PersonalMix,
};
use crate::model::{Budget, ConfigError, CostError, ModelConfig, Preset, VitConfig};

/// Why a plan cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Cost(#[from] CostError),
    #[error("epochs, batch size and training images must be at least 1")]
    Zero,
    #[error("{0} epochs is more than the {max} a run may have", max = TrainingPlan::MAX_EPOCHS)]
    TooManyEpochs(usize),
    #[error("a batch of {0} is more than the {max} images a step may take", max = TrainingPlan::MAX_BATCH)]
    BatchTooLarge(usize),
    #[error("the learning rate {0} must be 0 or more")]
    LearningRate(f64),
    #[error("the warm-up of {warmup} epochs must be 0 to the run's {epochs} epochs")]
    WarmUp { warmup: f64, epochs: usize },
    #[error("label smoothing must be in [0, 1)")]
    LabelSmoothing,
    #[error("weight decay must be 0 or more")]
    WeightDecay,
    #[error(transparent)]
    Distillation(#[from] DistillationError),
    #[error("your digits: {0}")]
    Mix(#[from] MixError),
    #[error("a teacher was given to a run whose plan does not distil")]
    NoDistillation,
    #[error(
        "this run learns from a teacher, which {0} cannot give it; continue it with `vit train --teacher FILE --resume-from`"
    )]
    NoTeacherHere(&'static str),
}

/// Everything a person chooses before pressing Train.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainingPlan {
    pub config: ModelConfig,
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
    /// Learn from a teacher's predictions too (the teacher comes with the run, not the plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distillation: Option<Distillation>,
    /// Train on only the first this many MNIST training images (a data-scaling point, or the
    /// MNIST part of a mix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub train_limit: Option<usize>,
    /// A person's digits, trained on before the MNIST images (fine-tuning on them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<Box<PersonalMix>>,
}

impl TrainingPlan {
    /// The seed's model and recipe: Adam 1e-3, batch 64, constant rate, no augmentation.
    pub fn seed() -> Self {
        Self {
            config: VitConfig::seed().into(),
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
            distillation: None,
            train_limit: None,
            mix: None,
        }
    }

    /// The shipped lab model's configuration and the recipe of its first 16 epochs (its later
    /// stages are in `pretrained/README.md`).
    pub fn lab() -> Self {
        Self {
            config: VitConfig::lab().into(),
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
            distillation: None,
            train_limit: None,
            mix: None,
        }
    }

    /// The CNN and the recipe of the lab model's teacher (`pretrained/README.md`): AdamW,
    /// warm-up and cosine decay, augmentation, no label smoothing (a smoothed teacher passes
    /// less on: Müller et al., 2019).
    pub fn cnn() -> Self {
        Self {
            config: ModelConfig::preset(Preset::Cnn),
            epochs: 20,
            batch_size: 128,
            lr: 2e-3,
            warmup_epochs: Some(0.3),
            weight_decay: 0.05,
            label_smoothing: 0.0,
            augment: true,
            seed: 11,
            eval_images: 2000,
            eval_every: 100,
            distillation: None,
            train_limit: None,
            mix: None,
        }
    }

    /// A preset's model and recipe.
    pub fn preset(preset: Preset) -> Self {
        match preset {
            Preset::Seed => Self::seed(),
            Preset::Lab => Self::lab(),
            Preset::Cnn => Self::cnn(),
        }
    }

    /// The training images a run takes of the `available` ones, and its mix's.
    pub fn train_images(&self, available: usize) -> usize {
        let mnist = self
            .train_limit
            .map_or(available, |limit| limit.min(available));
        mnist.saturating_add(self.mix_images())
    }

    /// The images of a person's an epoch takes (0 without a mix).
    pub fn mix_images(&self) -> usize {
        self.mix.as_deref().map_or(0, PersonalMix::images)
    }

    /// The preset as the page offers it: fewer epochs, and frequent small evaluations so the
    /// test curve moves while you watch.
    pub fn in_page(preset: Preset) -> Self {
        Self {
            epochs: 3,
            eval_every: 100,
            eval_images: 1000,
            ..Self::preset(preset)
        }
    }

    /// Why this plan cannot run in the page, if it cannot.
    pub fn validate(&self) -> Result<(), PlanError> {
        self.validate_within(&Budget::PAGE)
    }

    /// Why this plan cannot run where `budget` holds, if it cannot: every option in one
    /// place, the model and its batch held to the budget before anything is built.
    pub fn validate_within(&self, budget: &Budget) -> Result<(), PlanError> {
        self.config.validate()?;
        if self.epochs == 0 || self.batch_size == 0 || self.train_limit == Some(0) {
            return Err(PlanError::Zero);
        }
        if self.epochs > Self::MAX_EPOCHS {
            return Err(PlanError::TooManyEpochs(self.epochs));
        }
        if self.batch_size > Self::MAX_BATCH {
            return Err(PlanError::BatchTooLarge(self.batch_size));
        }
        // 0 is allowed: a run that only measures, keeping the weights as they are.
        if !(self.lr.is_finite() && self.lr >= 0.0) {
            return Err(PlanError::LearningRate(self.lr));
        }
        if let Some(warmup) = self.warmup_epochs
            && !(warmup.is_finite() && (0.0..=self.epochs as f64).contains(&warmup))
        {
            return Err(PlanError::WarmUp {
                warmup,
                epochs: self.epochs,
            });
        }
        if !(0.0..1.0).contains(&self.label_smoothing) {
            return Err(PlanError::LabelSmoothing);
        }
        if self.weight_decay < 0.0 || !self.weight_decay.is_finite() {
            return Err(PlanError::WeightDecay);
        }
        if let Some(mix) = &self.mix {
            mix.validate()?;
        }
        if let Some(distillation) = &self.distillation {
            distillation.validate()?;
            if !budget.teachers {
                return Err(PlanError::NoTeacherHere(budget.owner));
            }
        }
        self.config.check_budget(budget, Some(self.batch_size))?;
        Ok(())
    }

    /// Longer runs are mistakes: the shipped lab model took 83 epochs in all.
    pub const MAX_EPOCHS: usize = 10_000;
    /// Larger batches than MNIST's training split make no sense.
    pub const MAX_BATCH: usize = 60_000;

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
