//! A training step's forward and backward passes over halves of the batch, side by side on
//! the CPU's threads, their gradients added: neither model has anything that mixes images
//! (the ViT's LayerNorm is per token, the CNN has no batch norm), so the sum of the halves'
//! gradients is the batch's, to float rounding.
//!
//! Why: split op by op, a step of the seed preset is a few hundred parallel regions of a
//! fraction of a millisecond each, and waking the other thread for each costs about what it
//! saves (`vit bench`, 2 threads against 1: +11 %; `perf`: 15 % of the time in the
//! scheduler). Two halves are two regions per step. Each half has its own copy of the
//! parameters as leaves of its own autodiff graph (Burn locks a graph while it runs its
//! backward pass, so halves sharing one would take turns).
//!
//! The split does not depend on the number of threads (two halves, or none for a small
//! batch), and each half draws its dropout masks from its own stream, so one thread and two
//! give the same step bit for bit. Native only: the browser's worker has one thread.

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::{Device, Tensor};

use super::trainer::{BatchGradients, Objective, batch_gradients};
use crate::data::Batch;
use crate::model::{Classifier, CpuKernels, with_mask_stream};
use crate::rng::mix;

/// The smallest half worth its own pass: below twice this a batch runs whole.
const MIN_HALF: usize = 16;

/// Whether a step of `batch` images on `device` runs as two halves: on the CPU with its own
/// kernels (with [`CpuKernels::Composed`], the benchmark's "before", the batch runs whole).
pub fn split_here(batch: usize, device: &Device) -> bool {
    cfg!(not(target_arch = "wasm32"))
        && batch >= 2 * MIN_HALF
        && device.clone().inner() == Device::flex()
        && CpuKernels::chosen() == CpuKernels::Fused
}

/// The loss, correct predictions and gradients of `model` on `batch`, each half on a thread of
/// its own where one is free; half `h` draws its dropout masks from `mix(stream, h)`.
pub fn in_halves(
    model: &Classifier,
    batch: &Batch,
    objective: Objective<'_>,
    stream: u64,
) -> BatchGradients {
    let [images, ..] = batch.images.dims();
    let first = images / 2;
    let kernels = CpuKernels::chosen();
    let half = |index: u64, start: usize, len: usize| {
        // Set for the half's own run and put back after: the half may run on another thread
        // than the step, or on one that interrupts other work for it.
        move || {
            kernels.while_running(|| {
                with_mask_stream(mix(stream, index), || {
                    let model = model.clone().map(&mut FreshLeaves);
                    let half_images = batch.images.clone().narrow(0, start, len); // [B/2, 1, 28, 28]
                    let labels = batch.labels.clone().narrow(0, start, len); // [B/2]
                    let share = len as f64 / images as f64;
                    batch_gradients(&model, half_images, labels, objective, share)
                })
            })
        }
    };
    let (a, b) = rayon::join(half(0, 0, first), half(1, first, images - first));
    let mut sum = SumOfHalves {
        halves: [a.gradients, b.gradients],
        total: GradientsParams::new(),
    };
    model.visit(&mut sum);
    BatchGradients {
        loss: a.loss + b.loss,
        correct: a.correct + b.correct,
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
