//! What a run reports as it goes: chart points, the charts' history, step and test reports.
//! Plain data, shared by the page, the worker and `vit train`.

use serde::{Deserialize, Serialize};

use super::Evaluation;
use crate::data::{MnistSet, NUM_CLASSES};

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

    /// Past [`History::MAX_POINTS`] evaluations (a long run evaluating often), the older ones
    /// are halved, as the steps are.
    pub fn push_eval(&mut self, point: EvalPoint) {
        self.evals.push(point);
        if self.evals.len() > Self::MAX_POINTS {
            let last = *self.evals.last().expect("not empty");
            self.evals = self.evals.iter().copied().step_by(2).collect();
            if self.evals.last() != Some(&last) {
                self.evals.push(last);
            }
        }
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

/// Shown mistakes per evaluation.
pub const MAX_MISTAKES: usize = 24;

/// The test digits of one cell of an evaluation's confusion matrix: those labelled `label`
/// that the model took for `predicted`, the first [`CellDigits::MAX`] of them in test-set
/// order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellDigits {
    pub label: u8,
    pub predicted: u8,
    /// The evaluation's step.
    pub step: usize,
    /// Digits in the cell, shown or not.
    pub total: usize,
    /// Each shown digit's place in the test set.
    pub indices: Vec<usize>,
    pub images: Vec<Vec<u8>>,
}

impl CellDigits {
    pub const MAX: usize = 32;

    /// The cell (`label`, `predicted`) of predictions `predicted[i]` for `indices[i]` of `set`.
    pub fn of(
        set: &MnistSet,
        indices: &[usize],
        predictions: &[i64],
        (label, predicted): (u8, u8),
        step: usize,
    ) -> Self {
        let in_cell: Vec<usize> = indices
            .iter()
            .zip(predictions)
            .filter(|&(&i, &guess)| set.labels[i] == label && guess == predicted as i64)
            .map(|(&i, _)| i)
            .collect();
        let indices: Vec<usize> = in_cell.iter().copied().take(Self::MAX).collect();
        Self {
            label,
            predicted,
            step,
            total: in_cell.len(),
            images: indices.iter().map(|&i| set.image(i).to_vec()).collect(),
            indices,
        }
    }
}

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
