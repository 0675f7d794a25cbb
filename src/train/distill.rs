//! Knowledge distillation: the student learns from a teacher's predictions on the very batch
//! it sees (after augmentation) as well as from the labels. Hinton et al.'s soft targets, or
//! DeiT's hard-label variant (Touvron et al., 2021, eq. 3) without its distillation token, so
//! the student keeps the seed's architecture and loads in the seed's PyTorch code.

use burn::tensor::activation::{log_softmax, softmax};
use burn::tensor::{Int, Tensor};
use serde::{Deserialize, Serialize};

/// What the student learns from its teacher.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DistillationKind {
    /// `(1 - w)·CE(labels) + w·T²·KL(teacher_T ‖ student_T)`, both softened by temperature T.
    Soft,
    /// `½·CE(labels) + ½·CE(teacher's argmax)`: DeiT's hard-label distillation.
    Hard,
}

/// How a run distils; the teacher's weights are given with the run (`--teacher FILE`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Distillation {
    pub kind: DistillationKind,
    /// Softens both distributions (soft distillation only).
    pub temperature: f32,
    /// Share of the loss that is the teacher's (soft distillation only; hard is ½).
    pub weight: f32,
}

/// Why distillation settings cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DistillationError {
    #[error("the distillation temperature {0} must be more than 0 and at most {max}", max = Distillation::MAX_TEMPERATURE)]
    Temperature(f32),
    #[error("the distillation weight {0} must be in [0, 1]")]
    Weight(f32),
}

impl Distillation {
    /// Past this every softened distribution is uniform to f32 precision.
    pub const MAX_TEMPERATURE: f32 = 100.0;

    pub fn validate(&self) -> Result<(), DistillationError> {
        if !(self.temperature > 0.0 && self.temperature <= Self::MAX_TEMPERATURE) {
            return Err(DistillationError::Temperature(self.temperature));
        }
        if !(0.0..=1.0).contains(&self.weight) {
            return Err(DistillationError::Weight(self.weight));
        }
        Ok(())
    }

    /// The loss from the teacher alone (the label's part is the caller's), averaged over the
    /// batch, so that the step's loss is `label_share · CE + this`.
    ///
    /// # Shapes
    /// - student: `[batch, classes]`, logits on the autodiff device
    /// - teacher: `[batch, classes]`, logits, constant (no gradient)
    /// - output: `[1]`
    pub fn teacher_loss(&self, student: Tensor<2>, teacher: Tensor<2>) -> Tensor<1> {
        match self.kind {
            DistillationKind::Soft => {
                let t = self.temperature;
                let target = softmax(teacher.clone() / t, 1); // [B, C]
                let target_log = log_softmax(teacher / t, 1); // [B, C]
                let student_log = log_softmax(student / t, 1); // [B, C]
                // KL(target ‖ student); T² keeps its gradients the size of the labels' (Hinton).
                (target * (target_log - student_log))
                    .sum_dim(1) // [B, 1]
                    .mean() // [1]
                    * (self.weight * t * t)
            }
            DistillationKind::Hard => {
                let [batch, _] = student.dims();
                let guesses: Tensor<2, Int> = teacher.argmax(1); // [B, 1]
                let picked = log_softmax(student, 1).gather(1, guesses); // [B, 1]
                picked.reshape([batch]).mean().neg() * 0.5 // [1]
            }
        }
    }

    /// The labels' share of the loss beside [`Distillation::teacher_loss`].
    pub fn label_share(&self) -> f32 {
        match self.kind {
            DistillationKind::Soft => 1.0 - self.weight,
            DistillationKind::Hard => 0.5,
        }
    }
}
