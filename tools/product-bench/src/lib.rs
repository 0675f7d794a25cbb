//! The products a seed training step computes, timed one shape at a time.

#[path = "../../../src/model/fused/cpu_matmul.rs"]
pub mod cpu_matmul;

use cpu_matmul::Matrix;

/// `(layout, m, k, n)`: the seed's linear layers (batch 64 × 17 tokens = 1088 rows) forward
/// (0: plain), their input gradients (1: `rhs` transposed) and weight gradients (2: `lhs`
/// transposed).
pub const SHAPES: [(u32, usize, usize, usize); 7] = [
    (0, 1088, 64, 192),
    (0, 1088, 64, 128),
    (0, 1088, 128, 64),
    (1, 1088, 192, 64),
    (1, 1088, 64, 128),
    (2, 64, 1088, 192),
    (2, 128, 1088, 64),
];

/// Repetitions timed per shape (after one untimed).
pub const REPS: usize = 40;

/// Values in [-1, 1] that no compiler can fold: the timing does not depend on them.
fn values(count: usize, seed: u32) -> Vec<f32> {
    (0..count as u32)
        .map(|i| (i.wrapping_mul(2 * seed + 7_919) % 2001) as f32 / 1000.0 - 1.0)
        .collect()
}

/// The operands of one shape, in its layout.
pub struct Operands {
    a: Vec<f32>,
    b: Vec<f32>,
    pub layout: u32,
    pub m: usize,
    pub k: usize,
    pub n: usize,
}

impl Operands {
    pub fn new((layout, m, k, n): (u32, usize, usize, usize)) -> Self {
        Self {
            a: values(m * k, 1),
            b: values(k * n, 2),
            layout,
            m,
            k,
            n,
        }
    }

    pub fn matrices(&self) -> (Matrix<'_>, Matrix<'_>) {
        let (m, k, n) = (self.m, self.k, self.n);
        match self.layout {
            0 => (
                Matrix::row_major(&self.a, m, k),
                Matrix::row_major(&self.b, k, n),
            ),
            1 => (
                Matrix::row_major(&self.a, m, k),
                Matrix::row_major(&self.b, n, k).transposed(),
            ),
            _ => (
                Matrix::row_major(&self.a, k, m).transposed(),
                Matrix::row_major(&self.b, k, n),
            ),
        }
    }

    /// Multiply-adds in `REPS` products.
    pub fn work(&self) -> f64 {
        (self.m * self.k * self.n * REPS) as f64
    }
}

/// Runs `product` once, then `REPS` times between two readings of `clock` (ms); G multiply-adds
/// per second.
pub fn rate(operands: &Operands, clock: impl Fn() -> f64, product: impl Fn(&mut [f32])) -> f64 {
    let mut output = vec![0.0; operands.m * operands.n];
    product(&mut output);
    let start = clock();
    for _ in 0..REPS {
        product(&mut output);
    }
    let ms = clock() - start;
    std::hint::black_box(&output);
    operands.work() / (ms / 1000.0) / 1e9
}

#[cfg(target_arch = "wasm32")]
mod browser {
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        #[wasm_bindgen(js_namespace = performance)]
        fn now() -> f64;
    }

    #[cfg(feature = "fused-madd")]
    crate::simd_tile!(fused fused_tile);

    /// The worker's product (as this build's target features make it) at shape `index` of
    /// `SHAPES`, G multiply-adds per second.
    #[wasm_bindgen]
    pub fn product_rate(index: usize) -> f64 {
        // As `worker_fma` does at its start.
        #[cfg(feature = "fused-madd")]
        super::cpu_matmul::use_tile(fused_tile);
        let operands = super::Operands::new(super::SHAPES[index]);
        let (lhs, rhs) = operands.matrices();
        super::rate(&operands, now, |out| {
            super::cpu_matmul::add_product(out, lhs, rhs)
        })
    }

    #[wasm_bindgen]
    pub fn shape_count() -> usize {
        super::SHAPES.len()
    }

    /// Shape `index` as `[layout, m, k, n]`.
    #[wasm_bindgen]
    pub fn shape_of(index: usize) -> Vec<u32> {
        let (layout, m, k, n) = super::SHAPES[index];
        vec![layout, m as u32, k as u32, n as u32]
    }
}
