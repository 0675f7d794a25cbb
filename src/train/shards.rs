//! A training step's forward and backward passes over shards of the batch, their gradients
//! added in the shards' order: neither model has anything that mixes images (the ViT's
//! LayerNorm is per token, the CNN has no batch norm), so the sum of the shards' gradients is
//! the batch's, to float rounding.
//!
//! Why: split op by op, a step of the seed preset is a few hundred parallel regions of a
//! fraction of a millisecond each, and waking the other threads for each costs about what it
//! saves (`vit bench`, 2 threads against 1: +11 %; `perf`: 15 % of the time in the
//! scheduler). A shard is one region per step and thread. Each shard has its own copy of the
//! parameters as leaves of its own autodiff graph (Burn locks a graph while it runs its
//! backward pass, so shards sharing one would take turns).
//!
//! Natively the shards run side by side on rayon's threads. The browser's worker has one
//! thread and no shared memory: it deals the shards out between itself and its helper workers
//! (`shard_job.rs` is what travels), or runs them all in turn.
//!
//! How a batch is cut depends on the batch alone ([`shard_count`]), never on the number of
//! threads or workers, each shard draws its dropout masks from its own stream, and the shards'
//! gradients are added in the shards' order whoever computed them: one thread and eight, one
//! worker and four, give the same step bit for bit.

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::{Device, Int, Tensor};
use serde::{Deserialize, Serialize};

use super::cpu_workers::{MAX_SHARDS, shards_of};
use super::objective::{BatchGradients, Objective, batch_gradients};
use crate::data::Batch;
use crate::model::{Classifier, CpuKernels, with_mask_stream};
use crate::rng::mix;

/// How many shards a step of `batch` images on `device` is cut into: one (the batch runs
/// whole) except on the CPU with its own kernels (with [`CpuKernels::Composed`], the
/// benchmark's "before", the batch runs whole), where each shard holds [`MIN_SHARD`] images or
/// more and there are at most [`MAX_SHARDS`] ([`shards_of`]).
pub fn shard_count(batch: usize, device: &Device) -> usize {
    let here =
        device.clone().inner() == Device::flex() && CpuKernels::chosen() == CpuKernels::Fused;
    if here { shards_of(batch) } else { 1 }
}

/// One shard of a batch cut into `of`: shard `index` holds images
/// `index·B/of .. (index+1)·B/of` of a batch of B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub of: usize,
}

impl Shard {
    /// The `of` shards of a batch, in their order.
    pub fn all(of: usize) -> impl Iterator<Item = Self> {
        (0..of).map(move |index| Self { index, of })
    }

    /// Whether this names a shard of a cut the page makes.
    pub fn is_valid(self) -> bool {
        self.index < self.of && self.of <= MAX_SHARDS
    }

    /// The shard's first image and its number of images, in a batch of `images` (at most
    /// `usize::MAX / MAX_SHARDS`, which a batch never comes near).
    pub fn range(self, images: usize) -> (usize, usize) {
        let start = self.index * images / self.of;
        let end = (self.index + 1) * images / self.of;
        (start, end - start)
    }

    /// The stream the shard's dropout masks come from, in a step whose stream is `stream`.
    fn mask_stream(self, stream: u64) -> u64 {
        mix(stream, self.index as u64)
    }
}

/// The loss, correct predictions and gradients of `model` on `batch` cut into `count` shards,
/// each on a thread of its own where one is free (natively), or one after the other (in the
/// browser).
pub fn in_shards(
    model: &Classifier,
    batch: &Batch,
    objective: Objective<'_>,
    stream: u64,
    count: usize,
) -> BatchGradients {
    // Set for the shard's own run and put back after: the shard may run on another thread
    // than the step, or on one that interrupts other work for it.
    let kernels = CpuKernels::chosen();
    let shard = |shard: Shard| {
        kernels.while_running(|| shard_of_batch(model, batch, objective, stream, shard))
    };
    #[cfg(not(target_arch = "wasm32"))]
    let shards: Vec<BatchGradients> = {
        use rayon::prelude::*;
        Shard::all(count)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(shard)
            .collect()
    };
    #[cfg(target_arch = "wasm32")]
    let shards: Vec<BatchGradients> = Shard::all(count).map(shard).collect();
    add_in_order(model, shards)
}

/// One shard of `batch` through [`shard_gradients`].
pub fn shard_of_batch(
    model: &Classifier,
    batch: &Batch,
    objective: Objective<'_>,
    stream: u64,
    shard: Shard,
) -> BatchGradients {
    let [images, ..] = batch.images.dims();
    let (start, len) = shard.range(images);
    let shard_images = batch.images.clone().narrow(0, start, len); // [B/of, 1, 28, 28]
    let labels = batch.labels.clone().narrow(0, start, len); // [B/of]
    let share = len as f64 / images as f64;
    shard_gradients(model, shard_images, labels, objective, stream, shard, share)
}

/// The loss, correct predictions and gradients of one shard of a step's batch, its loss
/// counted as `share` of the batch's mean: the same computation wherever it runs (a rayon
/// thread, the worker, a helper), so the shards add up to the same step everywhere.
///
/// # Shapes
/// - images: `[shard, channels, height, width]`
/// - labels: `[shard]`
pub fn shard_gradients(
    model: &Classifier,
    images: Tensor<4>,
    labels: Tensor<1, Int>,
    objective: Objective<'_>,
    stream: u64,
    shard: Shard,
    share: f64,
) -> BatchGradients {
    with_mask_stream(shard.mask_stream(stream), || {
        let model = model.clone().map(&mut FreshLeaves);
        batch_gradients(&model, images, labels, objective, share)
    })
}

/// The batch's loss, correct count and gradients from its shards', added in the order given
/// (the shards' own): `((s0 + s1) + s2) + …`.
pub fn add_in_order(model: &Classifier, shards: Vec<BatchGradients>) -> BatchGradients {
    let mut shards = shards.into_iter();
    let first = shards.next().expect("a batch has at least one shard");
    let (mut loss, mut correct) = (first.loss, first.correct);
    let mut each = vec![first.gradients];
    for shard in shards {
        loss = loss + shard.loss;
        correct = correct + shard.correct;
        each.push(shard.gradients);
    }
    let mut sum = SumInOrder {
        shards: each,
        total: GradientsParams::new(),
    };
    model.visit(&mut sum);
    BatchGradients {
        loss,
        correct,
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

/// Each parameter's gradient from the shards, added in their order.
struct SumInOrder {
    shards: Vec<GradientsParams>,
    total: GradientsParams,
}

impl ModuleVisitor for SumInOrder {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let sum = self
            .shards
            .iter_mut()
            .filter_map(|shard| shard.remove::<D>(param.id))
            .reduce(|sum, next| sum + next);
        if let Some(sum) = sum {
            self.total.register(param.id, sum);
        }
    }
}
