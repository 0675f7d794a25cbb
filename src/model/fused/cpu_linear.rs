//! `input · weight + bias` and its gradients on the CPU, each one product on the rows of the
//! batch (`gemm` natively, `cpu_matmul.rs` in the worker), writing into the output it returns.
//!
//! Through Burn on flex, each product is allocated by `FlexTensor::empty`: zeroed as bytes,
//! then copied once more to meet the allocator's alignment (`Bytes::from_bytes_vec`), and the
//! bias is one more pass and allocation. `perf record` of `vit bench` (seed, batch 64) after
//! the other fused kernels: `memmove` 14.7 % and `memset` 6.8 % of a training step, nearly
//! all of it under `matmul_gemm`'s `FlexTensor::empty`. Here the output starts as the bias's
//! rows (or zeros) and `gemm` adds the product into it. The fix belongs in flex (an output
//! allocated as `f32`, which `Bytes::from_elems` takes without a copy); this is ours until then.

// The page's own binary (no `train` feature) only classifies: the gradients' kernels are
// compiled for the trait but never called there.
#![cfg_attr(not(feature = "train"), allow(dead_code))]

use super::cpu_matmul::Matrix;

/// Below this many multiply-adds a product runs on the calling thread: waking the pool costs
/// more than it saves (a batch-1 layer is 17 × 64 × 192 ≈ 0.2 M).
#[cfg(not(target_arch = "wasm32"))]
const PARALLEL_MULTIPLY_ADDS: usize = 1 << 21;

/// `output += lhs · rhs`, with `output` row-major.
fn add_product(output: &mut [f32], lhs: Matrix<'_>, rhs: Matrix<'_>) {
    let (m, k, n) = (lhs.rows, lhs.columns, rhs.columns);
    assert!(
        rhs.rows == k && output.len() == m * n && lhs.fits() && rhs.fits(),
        "linear: a product of {m}×{k} and {}×{n} into {} values",
        rhs.rows,
        output.len()
    );
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    // In the worker our own kernel: `cpu_matmul.rs` says why.
    #[cfg(target_arch = "wasm32")]
    super::cpu_matmul::add_product(output, lhs, rhs);
    #[cfg(not(target_arch = "wasm32"))]
    add_product_gemm(output, lhs, rhs);
}

#[cfg(not(target_arch = "wasm32"))]
fn add_product_gemm(output: &mut [f32], lhs: Matrix<'_>, rhs: Matrix<'_>) {
    let (m, k, n) = (lhs.rows, lhs.columns, rhs.columns);
    let stride = |s: usize| s as isize;
    // SAFETY: `add_product`'s assertion keeps every element gemm reads (lhs: m×k, rhs: k×n at their
    // strides) inside its slice and every element it writes (m×n, row-major) inside `output`,
    // which is borrowed mutably so nothing else reads or writes it meanwhile; the inputs are
    // shared borrows of other memory (a `&mut` cannot alias them).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            output.as_mut_ptr(),
            1,
            stride(n),
            true,
            lhs.values.as_ptr(),
            stride(lhs.column_stride),
            stride(lhs.row_stride),
            rhs.values.as_ptr(),
            stride(rhs.column_stride),
            stride(rhs.row_stride),
            1.0,
            1.0,
            false,
            false,
            false,
            parallelism(m * n * k),
        );
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn parallelism(multiply_adds: usize) -> gemm::Parallelism {
    let threads = rayon::current_num_threads();
    if threads > 1 && multiply_adds >= PARALLEL_MULTIPLY_ADDS {
        return gemm::Parallelism::Rayon(threads);
    }
    gemm::Parallelism::None
}

/// `input · weight + bias`.
///
/// # Shapes
/// - input: `[rows, in]`
/// - weight: `[in, out]`
/// - bias: `[out]` (or none)
/// - output: `[rows, out]`
pub fn linear(input: &[f32], weight: &[f32], bias: Option<&[f32]>, inputs: usize) -> Vec<f32> {
    let outputs = weight.len() / inputs.max(1);
    let rows = input.len() / inputs.max(1);
    let mut output = match bias {
        Some(bias) => bias.repeat(rows),
        None => vec![0.0; rows * outputs],
    };
    add_product(
        &mut output,
        Matrix::row_major(input, rows, inputs),
        Matrix::row_major(weight, inputs, outputs),
    );
    output
}

/// [`linear`]'s gradient for its input: `d_output · weightᵀ`.
///
/// # Shapes
/// - weight: `[in, out]`
/// - d_output: `[rows, out]`
/// - d_input: `[rows, in]`
pub fn linear_input_backward(weight: &[f32], d_output: &[f32], inputs: usize) -> Vec<f32> {
    let outputs = weight.len() / inputs.max(1);
    let rows = d_output.len() / outputs.max(1);
    let mut d_input = vec![0.0; rows * inputs];
    add_product(
        &mut d_input,
        Matrix::row_major(d_output, rows, outputs),
        Matrix::row_major(weight, inputs, outputs).transposed(),
    );
    d_input
}

/// [`linear`]'s gradient for its weight: `inputᵀ · d_output`.
///
/// # Shapes
/// - input: `[rows, in]`
/// - d_output: `[rows, out]`
/// - d_weight: `[in, out]`
pub fn linear_weight_backward(
    input: &[f32],
    d_output: &[f32],
    inputs: usize,
    outputs: usize,
) -> Vec<f32> {
    let rows = input.len() / inputs.max(1);
    let mut d_weight = vec![0.0; inputs * outputs];
    add_product(
        &mut d_weight,
        Matrix::row_major(input, rows, inputs).transposed(),
        Matrix::row_major(d_output, rows, outputs),
    );
    d_weight
}
