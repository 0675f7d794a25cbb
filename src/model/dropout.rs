//! Dropout with masks the CPU backend can afford.
//!
//! Burn's [`Dropout`] draws every mask element as an `f64` Bernoulli sample from a ChaCha
//! generator behind a lock; on the `flex` CPU backend that was ~28 % of a training step of the
//! seed preset (`perf record` of `vit bench`). On `flex` the mask here is a hash of each
//! element's index and the stream (the fused kernels' [`keeps`], which vectorises), filled in
//! blocks (in parallel natively), already scaled by `1 / keep`, so one multiplication applies
//! it. Other devices (WebGPU, Vulkan) draw on the device, as Burn does.
//! Whether dropout applies at all is decided exactly as in [`Dropout::forward`]: the layer's
//! `training` flag, an autodiff device, and a non-zero probability.

use std::cell::Cell;

use burn::nn::Dropout;
use burn::tensor::{Device, Tensor, TensorData};

use super::thread_setting::while_set;
use crate::rng::mix as hash;

/// Mask elements drawn from one generator state; blocks are independent so they can be
/// filled in any order, on any number of threads, with the same result.
const BLOCK: usize = 16 * 1024;

thread_local! {
    /// The stream the next mask draws from. Per thread, not per process like Burn's device
    /// seed: a step seeds and runs its forward pass on one thread, and runs on other threads
    /// (tests in parallel, say) must not shift its masks.
    static NEXT_MASK_STREAM: Cell<u64> = const { Cell::new(0x9e37_79b9_7f4a_7c15) };
}

/// Starts this thread's CPU dropout masks at the first stream a run seeded with `seed` draws.
pub(super) fn seed_masks(seed: u64) {
    NEXT_MASK_STREAM.set(mask_stream(seed));
}

/// The first stream of the masks a run seeded with `seed` draws.
fn mask_stream(seed: u64) -> u64 {
    hash(seed, 0xd1b5_4a32_d192_ed03)
}

/// Runs `work` with this thread's CPU dropout masks drawn from `seed`, then puts back the
/// stream the thread had (`thread_setting.rs` says why).
pub fn with_mask_stream<T>(seed: u64, work: impl FnOnce() -> T) -> T {
    while_set(&NEXT_MASK_STREAM, mask_stream(seed), work)
}

/// `layer` applied to `input`: identity in inference, a fresh mask per call in training.
///
/// # Shapes
/// - input: `[..., any]`
/// - output: the same
pub fn dropout<const D: usize>(layer: &Dropout, input: Tensor<D>) -> Tensor<D> {
    let device = input.device();
    if !layer.training.is_enabled() || !device.is_autodiff() || layer.prob == 0.0 {
        return input;
    }
    if device.clone().inner() != Device::flex() {
        return layer.forward(input);
    }
    let shape = input.shape();
    let stream = NEXT_MASK_STREAM.replace(NEXT_MASK_STREAM.get().wrapping_add(1));
    let mask = bernoulli_mask(shape.num_elements(), 1.0 - layer.prob, stream);
    input * Tensor::from_data(TensorData::new(mask, shape), &device)
}

/// For a kernel that draws its own dropout mask (the fused GPU attention): the probability of
/// keeping an element and the mask's seed, from the same stream as the masks above; `None`
/// where `layer` does not apply (as [`dropout`] decides).
pub fn kernel_dropout(layer: &Dropout, device: &Device) -> Option<(f32, u32)> {
    if !layer.training.is_enabled() || !device.is_autodiff() || layer.prob == 0.0 {
        return None;
    }
    let stream = NEXT_MASK_STREAM.replace(NEXT_MASK_STREAM.get().wrapping_add(1));
    Some(((1.0 - layer.prob) as f32, hash(stream, 0x6b43_a9b5) as u32))
}

/// `len` values, each `1 / keep` with probability `keep` and 0 otherwise.
pub fn bernoulli_mask(len: usize, keep: f64, stream: u64) -> Vec<f32> {
    let seed = hash(stream, 0x2545_f491) as u32;
    let keep = keep as f32;
    let scale = 1.0 / keep;
    let fill = move |(index, block): (usize, &mut [f32])| {
        fill_mask(block, index * BLOCK, seed, keep, scale);
    };
    let mut mask = vec![0.0f32; len];
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        mask.par_chunks_mut(BLOCK).enumerate().for_each(fill);
    }
    #[cfg(target_arch = "wasm32")]
    mask.chunks_mut(BLOCK).enumerate().for_each(fill);
    mask
}

#[multiversion::multiversion(targets("x86_64+avx2"))]
fn fill_mask(block: &mut [f32], first: usize, seed: u32, keep: f32, scale: f32) {
    for (offset, value) in block.iter_mut().enumerate() {
        *value = if keeps(seed, first + offset, keep) {
            scale
        } else {
            0.0
        };
    }
}

/// Whether dropout keeps element `index` of a mask drawn from `seed`: the finaliser of
/// MurmurHash3 of the two, below `keep` as a fraction of 2²⁴. The GPU's attention kernel draws
/// its mask by the same rule (`fused/kernels.rs`), the CPU's too (`fused/cpu_kernels.rs`).
#[inline(always)]
pub(crate) fn keeps(seed: u32, index: usize, keep: f32) -> bool {
    let mut x = (index as u32) ^ seed;
    x ^= x >> 16;
    x = x.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 13;
    x = x.wrapping_mul(0xc2b2_ae35);
    x ^= x >> 16;
    (x >> 8) as f32 * (1.0 / 16_777_216.0) < keep
}
