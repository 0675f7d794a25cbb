//! A training step's forward and backward passes over halves of the batch, their gradients
//! added: neither model has anything that mixes images (the ViT's LayerNorm is per token, the
//! CNN has no batch norm), so the sum of the halves' gradients is the batch's, to float
//! rounding.
//!
//! Why: split op by op, a step of the seed preset is a few hundred parallel regions of a
//! fraction of a millisecond each, and waking the other thread for each costs about what it
//! saves (`vit bench`, 2 threads against 1: +11 %; `perf`: 15 % of the time in the
//! scheduler). Two halves are two regions per step. Each half has its own copy of the
//! parameters as leaves of its own autodiff graph (Burn locks a graph while it runs its
//! backward pass, so halves sharing one would take turns).
//!
//! Natively the halves run side by side on rayon's threads. The browser's worker has one
//! thread and no shared memory: it runs the first half itself and hands the second to a
//! helper worker where it has one (`half_job.rs` is what travels), or runs both in turn.
//!
//! The split does not depend on the number of threads or workers (two halves, or none for a
//! small batch), and each half draws its dropout masks from its own stream, so one thread and
//! two, or one worker and two, give the same step bit for bit.

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::{Device, Int, Tensor};

use super::objective::{BatchGradients, Objective, batch_gradients};
use crate::data::Batch;
use crate::model::{Classifier, CpuKernels, with_mask_stream};
use crate::rng::mix;

/// The smallest half worth its own pass: below twice this a batch runs whole.
const MIN_HALF: usize = 16;

/// Whether a step of `batch` images on `device` runs as two halves: on the CPU with its own
/// kernels (with [`CpuKernels::Composed`], the benchmark's "before", the batch runs whole).
pub fn split_here(batch: usize, device: &Device) -> bool {
    batch >= 2 * MIN_HALF
        && device.clone().inner() == Device::flex()
        && CpuKernels::chosen() == CpuKernels::Fused
}

/// Which half of a batch: the first `images / 2` images, or the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Half {
    First,
    Second,
}

impl Half {
    /// The half's first image and its number of images, in a batch of `images`.
    pub fn range(self, images: usize) -> (usize, usize) {
        let first = images / 2;
        match self {
            Self::First => (0, first),
            Self::Second => (first, images - first),
        }
    }

    /// The stream the half's dropout masks come from, in a step whose stream is `stream`.
    fn mask_stream(self, stream: u64) -> u64 {
        mix(stream, self as u64)
    }
}

/// The loss, correct predictions and gradients of `model` on `batch`, each half on a thread of
/// its own where one is free (natively), or one after the other (in the browser).
pub fn in_halves(
    model: &Classifier,
    batch: &Batch,
    objective: Objective<'_>,
    stream: u64,
) -> BatchGradients {
    // Set for the half's own run and put back after: the half may run on another thread than
    // the step, or on one that interrupts other work for it.
    let kernels = CpuKernels::chosen();
    let half = |which: Half| {
        move || kernels.while_running(|| half_of_batch(model, batch, objective, stream, which))
    };
    #[cfg(not(target_arch = "wasm32"))]
    let (first, second) = rayon::join(half(Half::First), half(Half::Second));
    #[cfg(target_arch = "wasm32")]
    let (first, second) = (half(Half::First)(), half(Half::Second)());
    add_halves(model, first, second)
}

/// One half of `batch` through [`half_gradients`].
pub fn half_of_batch(
    model: &Classifier,
    batch: &Batch,
    objective: Objective<'_>,
    stream: u64,
    which: Half,
) -> BatchGradients {
    let [images, ..] = batch.images.dims();
    let (start, len) = which.range(images);
    let half_images = batch.images.clone().narrow(0, start, len); // [B/2, 1, 28, 28]
    let labels = batch.labels.clone().narrow(0, start, len); // [B/2]
    let share = len as f64 / images as f64;
    half_gradients(model, half_images, labels, objective, stream, which, share)
}

/// The loss, correct predictions and gradients of one half of a step's batch, its loss
/// counted as `share` of the batch's mean: the same computation wherever it runs (a rayon
/// thread, the worker, its helper), so the halves add up to the same step everywhere.
///
/// # Shapes
/// - images: `[half, channels, height, width]`
/// - labels: `[half]`
pub fn half_gradients(
    model: &Classifier,
    images: Tensor<4>,
    labels: Tensor<1, Int>,
    objective: Objective<'_>,
    stream: u64,
    which: Half,
    share: f64,
) -> BatchGradients {
    with_mask_stream(which.mask_stream(stream), || {
        let model = model.clone().map(&mut FreshLeaves);
        batch_gradients(&model, images, labels, objective, share)
    })
}

/// The batch's loss, correct count and gradients from its two halves', added in their order.
pub fn add_halves(
    model: &Classifier,
    first: BatchGradients,
    second: BatchGradients,
) -> BatchGradients {
    let mut sum = SumOfHalves {
        halves: [first.gradients, second.gradients],
        total: GradientsParams::new(),
    };
    model.visit(&mut sum);
    BatchGradients {
        loss: first.loss + second.loss,
        correct: first.correct + second.correct,
        gradients: sum.total,
    }
}

/// Every parameter as a new leaf (the same values and id): the copy's graph is its own.
struct FreshLeaves;

impl ModuleMapper for FreshLeaves {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        param.map(|tensor| tensor.detach().require_grad())
    }
}

/// Each parameter's gradient from the two halves, added in their order.
struct SumOfHalves {
    halves: [GradientsParams; 2],
    total: GradientsParams,
}

impl ModuleVisitor for SumOfHalves {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let [a, b] = &mut self.halves;
        let sum = match (a.remove::<D>(param.id), b.remove::<D>(param.id)) {
            (Some(a), Some(b)) => a + b,
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => return,
        };
        self.total.register(param.id, sum);
    }
}
