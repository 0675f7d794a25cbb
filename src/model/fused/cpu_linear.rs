//! `input · weight + bias` and its gradients on the CPU, each one `gemm` call on the rows of
//! the batch, writing into the output it returns.
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

/// Below this many multiply-adds a product runs on the calling thread: waking the pool costs
/// more than it saves (a batch-1 layer is 17 × 64 × 192 ≈ 0.2 M).
#[cfg(not(target_arch = "wasm32"))]
const PARALLEL_MULTIPLY_ADDS: usize = 1 << 21;

fn parallelism(multiply_adds: usize) -> gemm::Parallelism {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let threads = rayon::current_num_threads();
        if threads > 1 && multiply_adds >= PARALLEL_MULTIPLY_ADDS {
            return gemm::Parallelism::Rayon(threads);
        }
    }
    let _ = multiply_adds;
    gemm::Parallelism::None
}

/// A matrix in a slice: its size and the strides of a row and of a column (a transposed view is
/// the same values with the strides swapped).
#[derive(Clone, Copy)]
struct Matrix<'a> {
    values: &'a [f32],
    rows: usize,
    columns: usize,
    row_stride: usize,
    column_stride: usize,
}

impl<'a> Matrix<'a> {
    fn row_major(values: &'a [f32], rows: usize, columns: usize) -> Self {
        Self {
            values,
            rows,
            columns,
            row_stride: columns,
            column_stride: 1,
        }
    }

    fn transposed(self) -> Self {
        Self {
            values: self.values,
            rows: self.columns,
            columns: self.rows,
            row_stride: self.column_stride,
            column_stride: self.row_stride,
        }
    }

    /// Whether every element the strides reach lies in `values`.
    fn fits(&self) -> bool {
        if self.rows == 0 || self.columns == 0 {
            return true;
        }
        let last = (self.rows - 1)
            .checked_mul(self.row_stride)
            .zip((self.columns - 1).checked_mul(self.column_stride))
            .and_then(|(a, b)| a.checked_add(b));
        last.is_some_and(|last| last < self.values.len())
    }
}

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
    let stride = |s: usize| s as isize;
    // SAFETY: the assertion above keeps every element gemm reads (lhs: m×k, rhs: k×n at their
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
