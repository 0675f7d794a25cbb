//! `exp` and `erf` in `f32` as branch-free polynomials, so that the loops of the CPU kernels
//! that call them compile to SIMD (AVX2 natively, simd128 in the browser). `f32::exp` and
//! `libm`'s `erff` are calls per element that no compiler vectorises: in `vit bench`'s
//! profile they were 12.8 % and 8.2 % of a training step (the softmax and the exact GELU).
//!
//! Accuracy, against `f64` references over the ranges the model meets (`tests/native/kernels.rs`):
//! [`exp`] within 2 ulp (relative 2.4e-7), [`erf`] within 6e-7 absolute (1.5e-7 in exact
//! arithmetic, the rest `f32` rounding near 0), far inside the 1e-4 of the PyTorch parity test.

/// Adding then subtracting 1.5 · 2²³ rounds an `f32` of magnitude below 2²² to the nearest
/// integer (ties to even) without a rounding instruction SSE2 lacks, and leaves that integer
/// in the low bits of the sum.
const ROUNDER: f32 = 12_582_912.0;

/// `exp(x)`: `x = n · ln 2 + r` with `|r| ≤ ln 2 / 2`, Cephes' degree-6 polynomial for `eʳ`,
/// and `2ⁿ` built in the exponent bits (the last coefficient, 0.50000001, is 0.5 in `f32`). Clamped to `[-87, 88]`, where `eˣ` stays a normal
/// `f32`: below, it returns ~1.6e-38 for 0, which no softmax or Gaussian here can tell apart.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    // `clamp` keeps a NaN a NaN (a diverged step must stay visible as one).
    let x = x.clamp(-87.0, 88.0);
    let shifted = x * core::f32::consts::LOG2_E + ROUNDER;
    let n = shifted - ROUNDER;
    // ln 2 in two parts, so that `n · ln 2` is exact in the first.
    let r = x - n * 0.693_359_4 - n * -2.121_944_4e-4;
    let mut p = 1.987_569_1e-4_f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let exp_r = p * r * r + r + 1.0;
    // The low bits of `shifted` are `n` offset by 2²² (as 0x4B40_0000 is 1.5 · 2²³); `n + 127`
    // shifted into the exponent field is `2ⁿ`.
    let exponent = shifted.to_bits().wrapping_sub(0x4B40_0000 - 127) << 23;
    exp_r * f32::from_bits(exponent)
}

/// `erf(x)` and `exp(-x²)` together: the GELU's backward pass needs both, and the first is
/// made from the second. Abramowitz and Stegun 7.1.26: absolute error 1.5e-7, 6e-7 in `f32`.
#[inline(always)]
pub fn erf_and_gaussian(x: f32) -> (f32, f32) {
    const P: f32 = 0.327_591_1;
    let a = x.abs();
    let t = 1.0 / (1.0 + P * a);
    let mut poly = 1.061_405_4_f32;
    poly = poly * t - 1.453_152_1;
    poly = poly * t + 1.421_413_8;
    poly = poly * t - 0.284_496_74;
    poly = poly * t + 0.254_829_6;
    let gaussian = exp(-a * a);
    ((1.0 - poly * t * gaussian).copysign(x), gaussian)
}

/// `erf(x)`, as [`erf_and_gaussian`].
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    erf_and_gaussian(x).0
}

/// The exact GELU, `x · Φ(x) = x/2 · (1 + erf(x/√2))`, as PyTorch's `nn.GELU()`.
#[inline(always)]
pub fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * core::f32::consts::FRAC_1_SQRT_2))
}

/// The GELU's derivative, `Φ(x) + x · φ(x)`.
#[inline(always)]
pub fn gelu_derivative(x: f32) -> f32 {
    /// 1/√(2π).
    const INV_SQRT_TAU: f32 = 0.398_942_3;
    let (erf, gaussian) = erf_and_gaussian(x * core::f32::consts::FRAC_1_SQRT_2);
    0.5 * (1.0 + erf) + x * INV_SQRT_TAU * gaussian
}

/// The sum of `values` in eight lanes, so that it vectorises (a plain float sum must keep
/// its order, which no compiler may split across lanes).
#[inline(always)]
pub fn sum(values: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let mut chunks = values.chunks_exact(8);
    for chunk in &mut chunks {
        for (lane, value) in lanes.iter_mut().zip(chunk) {
            *lane += value;
        }
    }
    let rest: f32 = chunks.remainder().iter().sum();
    fold_lanes(lanes) + rest
}

/// `Σ a ⊙ b`, in eight lanes as [`sum`].
#[inline(always)]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let mut a_chunks = a.chunks_exact(8);
    let mut b_chunks = b.chunks_exact(8);
    for (x, y) in (&mut a_chunks).zip(&mut b_chunks) {
        for ((lane, x), y) in lanes.iter_mut().zip(x).zip(y) {
            *lane += x * y;
        }
    }
    let rest: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    fold_lanes(lanes) + rest
}

#[inline(always)]
fn fold_lanes(lanes: [f32; 8]) -> f32 {
    ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5]))
        + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]))
}
