//! The part of a run that is not tensors: saved beside the model so that a reload resumes.

use serde::{Deserialize, Serialize};

use super::{History, TrainingPlan};

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
