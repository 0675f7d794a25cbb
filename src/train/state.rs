//! The part of a run that is not tensors: saved beside the model so that a reload resumes.

use serde::{Deserialize, Serialize};

use super::plan::PlanError;
use super::{History, TrainingPlan};
use crate::model::Budget;

/// Metadata key of a checkpoint's [`SessionState`], as JSON (`Checkpoint`, with the `train`
/// feature, writes and reads it; the page reads it alone to offer a resume).
pub const SESSION_KEY: &str = "vitlab.session";

/// Why a saved run cannot be resumed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SavedRunError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("its image count {0} is out of range")]
    ImageCount(usize),
    #[error(
        "its counters are out of range (step {step} of {total_steps}, {images} images, {seconds} s)"
    )]
    Counters {
        step: usize,
        total_steps: usize,
        images: usize,
        seconds: f64,
    },
    #[error("its pass over the data is out of range ({left} images left of {loaded} loaded)")]
    Pass { left: usize, loaded: usize },
    #[error("its plan's model is not the model its weights are for")]
    ModelMismatch,
}

/// What a saved run offers to resume, read without reading the run itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSummary {
    pub step: usize,
    pub total_steps: usize,
    pub plan: TrainingPlan,
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
    /// What was left of the pass over the training images, taken from the end.
    #[serde(default)]
    pub pass_left: Vec<usize>,
    /// Training images loaded when saved (`pass_left` indexes them).
    #[serde(default)]
    pub loaded: usize,
}

impl SessionState {
    /// What a saved run offers to resume, or why it cannot be resumed: its plan is checked
    /// as a new one would be, and its counters must be those of a run that could have been.
    pub fn summary(&self) -> Result<SavedSummary, SavedRunError> {
        self.summary_within(&Budget::PAGE)
    }

    /// [`SessionState::summary`] where `budget` holds (the command line's is larger).
    pub fn summary_within(&self, budget: &Budget) -> Result<SavedSummary, SavedRunError> {
        self.plan.validate_within(budget)?;
        if self.train_items > crate::data::Manifest::MAX_IMAGES {
            return Err(SavedRunError::ImageCount(self.train_items));
        }
        // Bounded by the plan's epoch cap and the image cap, far from overflowing.
        let total_steps = self.plan.epochs * self.plan.steps_per_epoch(self.train_items);
        let seen_at_most = self.step.checked_mul(self.plan.batch_size);
        if self.step > total_steps
            || seen_at_most.is_none_or(|most| self.images_seen > most)
            || !(self.seconds.is_finite() && self.seconds >= 0.0)
        {
            return Err(SavedRunError::Counters {
                step: self.step,
                total_steps,
                images: self.images_seen,
                seconds: self.seconds,
            });
        }
        if self.loaded > self.train_items
            || self.pass_left.len() > self.loaded
            || self.pass_left.iter().any(|&index| index >= self.loaded)
        {
            return Err(SavedRunError::Pass {
                left: self.pass_left.len(),
                loaded: self.loaded,
            });
        }
        Ok(SavedSummary {
            step: self.step,
            total_steps,
            plan: self.plan.clone(),
        })
    }
}

/// Bias-corrected exponential moving averages (as TensorBoard smooths).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Smoothing {
    loss: f64,
    accuracy: f64,
    rate: f64,
    weight: f64,
}

#[cfg(feature = "train")]
impl Smoothing {
    const DECAY: f64 = 0.95;

    pub(crate) fn update(
        &mut self,
        loss: f64,
        accuracy: f64,
        images_per_second: f64,
    ) -> (f64, f64, f64) {
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
