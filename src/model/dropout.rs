//! Dropout with masks the CPU backend can afford.
//!
//! Burn's [`Dropout`] draws every mask element as an `f64` Bernoulli sample from a ChaCha
//! generator behind a lock; on the `flex` CPU backend that was ~28 % of a training step of the
//! seed preset (`perf record` of `vit bench`). On `flex` the mask here comes from SplitMix64
//! in independent blocks (in parallel natively), already scaled by `1 / keep`, so one
//! multiplication applies it. Other devices (WebGPU, Vulkan) draw on the device, as Burn does.
//! Whether dropout applies at all is decided exactly as in [`Dropout::forward`]: the layer's
//! `training` flag, an autodiff device, and a non-zero probability.

use std::cell::Cell;

use burn::nn::Dropout;
use burn::tensor::{Device, Tensor, TensorData};

use crate::rng::{SplitMix64, mix as hash};

/// Mask elements drawn from one generator state; blocks are independent so they can be
/// filled in any order, on any number of threads, with the same result.
const BLOCK: usize = 16 * 1024;

thread_local! {
    /// The stream the next mask draws from. Per thread, not per process like Burn's device
    /// seed: a step seeds and runs its forward pass on one thread, and runs on other threads
    /// (tests in parallel, say) must not shift its masks.
    static NEXT_MASK_STREAM: Cell<u64> = const { Cell::new(0x9e37_79b9_7f4a_7c15) };
}

/// Seeds every random draw of a run: Burn's (initialisation, device-side dropout) and the
/// CPU dropout masks.
pub fn seed_randomness(device: &Device, seed: u64) {
    device.seed(seed);
    NEXT_MASK_STREAM.set(hash(seed, 0xd1b5_4a32_d192_ed03));
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
    // Four 16-bit draws per 64-bit number: a draw below `threshold` keeps the element, which
    // gives `keep` to within 2⁻¹⁷ — far below the noise of any one mask — at half the cost
    // of 32-bit draws.
    let threshold = (keep * 65_536.0).round().min(65_535.0) as u16;
    let scale = (1.0 / keep) as f32;
    let fill = move |(index, block): (usize, &mut [f32])| {
        let mut rng = SplitMix64::new(hash(stream, index as u64));
        for quad in block.chunks_mut(4) {
            let bits = rng.next_u64();
            for (lane, value) in quad.iter_mut().enumerate() {
                let draw = (bits >> (16 * lane)) as u16;
                *value = if draw < threshold { scale } else { 0.0 };
            }
        }
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
