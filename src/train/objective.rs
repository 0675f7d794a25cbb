//! What a training step minimises and what its passes give: the loss of a model on a batch
//! (or a part of one), the correct count and the gradients. The leaf the step is built on:
//! the whole step (`trainer.rs`), its shards (`shards.rs`) and a helper's shards
//! (`shard_job.rs`) all compute [`batch_gradients`].

use burn::module::Module;
use burn::optim::GradientsParams;
use burn::tensor::activation::log_softmax;
use burn::tensor::{Device, Int, Tensor};

use super::{Distillation, count_correct};
use crate::model::Classifier;

/// Cross-entropy against targets smoothed towards uniform: with smoothing `s` over `C`
/// classes the target is `(1 - s)·onehot + s/C`, so the loss is
/// `-((1 - s)·log p[label] + s·mean(log p))`. Written with `gather` rather than `one_hot`,
/// whose argument check reads the labels back synchronously (a panic on WebGPU in a browser).
///
/// # Shapes
/// - logits: `[batch, classes]`
/// - labels: `[batch]`
/// - output: `[1]`, the batch mean
pub fn cross_entropy(logits: Tensor<2>, labels: Tensor<1, Int>, smoothing: f32) -> Tensor<1> {
    let [batch, _] = logits.dims();
    let log_probs = log_softmax(logits, 1); // [B, C]
    let picked = log_probs.clone().gather(1, labels.reshape([batch, 1])); // [B, 1]
    let uniform = log_probs.mean_dim(1); // [B, 1]
    (picked * (1.0 - smoothing) + uniform * smoothing)
        .mean()
        .neg() // [1]
}

/// What the forward and backward passes of a step give.
pub struct BatchGradients {
    /// `[1]`, the batch's mean loss (or a part's share of it), detached.
    pub loss: Tensor<1>,
    /// `[1]`, correct predictions (before the update).
    pub correct: Tensor<1, Int>,
    pub gradients: GradientsParams,
}

/// What a step minimises: cross-entropy against (smoothed) labels, and where a teacher is
/// given, its predictions on the same images.
#[derive(Clone, Copy)]
pub struct Objective<'a> {
    pub smoothing: f32,
    pub teacher: Option<&'a Teacher>,
}

/// A trained model whose predictions a student learns from, on the inference device.
pub struct Teacher {
    model: Classifier,
    distillation: Distillation,
}

impl Teacher {
    /// `model` is moved to `device`'s inference side and set for inference (no dropout).
    pub fn new(model: Classifier, distillation: Distillation, device: &Device) -> Self {
        Self {
            model: model.valid().to_device(&device.clone().inner()),
            distillation,
        }
    }

    /// The teacher's logits for `images` (on the autodiff device), as a constant there.
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - output: `[batch, classes]`
    fn logits(&self, images: Tensor<4>) -> Tensor<2> {
        Tensor::from_inner(self.model.forward(images.inner())) // [B, C]
    }
}

/// The loss, correct predictions and gradients of `model` on `images` and their `labels`, the
/// loss counted as `share` of the batch's mean (1 for a whole batch; a part of one, its share
/// of the images, so that the parts' gradients add up to the batch's).
///
/// # Shapes
/// - images: `[batch, channels, height, width]`
/// - labels: `[batch]`
pub(super) fn batch_gradients(
    model: &Classifier,
    images: Tensor<4>,
    labels: Tensor<1, Int>,
    objective: Objective<'_>,
    share: f64,
) -> BatchGradients {
    let teacher = objective
        .teacher
        .map(|teacher| (teacher, teacher.logits(images.clone()))); // [B, C]
    let logits = model.forward(images); // [B, C]
    let correct = count_correct(logits.clone().detach(), labels.clone());
    let from_labels = cross_entropy(logits.clone(), labels, objective.smoothing); // [1]
    let loss = match teacher {
        None => from_labels,
        Some((teacher, teacher_logits)) => {
            let distillation = teacher.distillation;
            from_labels * distillation.label_share()
                + distillation.teacher_loss(logits, teacher_logits)
        }
    } * share; // [1]
    let gradients = GradientsParams::from_grads(loss.backward(), model);
    BatchGradients {
        loss: loss.detach(),
        correct,
        gradients,
    }
}
