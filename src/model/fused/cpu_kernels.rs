//! The CPU kernels behind [`super::VitKernels`] on flex, on plain `f32` slices: the same
//! formulas as the GPU's (`kernels.rs`), written as loops that compile to SIMD, each one pass
//! over its rows where Burn's composed ops (under autodiff, which composes LayerNorm and
//! softmax of a dozen recorded ops each) take a dozen passes, allocations and copies.
//!
//! Natively each kernel splits its work over rayon's threads in blocks of a fixed size, so the
//! result does not depend on the number of threads (a resumed run equals an uninterrupted one
//! on any machine's thread count); the reductions over rows (a LayerNorm's or a bias's
//! gradient) add each block's partial sums in block order. Each block's work is compiled
//! twice, for the baseline and for AVX2 (chosen at run time: `multiversion`); in the browser
//! `.cargo/config.toml`'s simd128 applies to all of it.

// The page's own binary (no `train` feature) only classifies: the gradients' kernels are
// compiled for the trait but never called there.
#![cfg_attr(not(feature = "train"), allow(dead_code))]

use multiversion::multiversion;

use super::super::dropout::keeps;
use super::fast_math::{dot, exp, gelu, gelu_derivative, sum};

/// Rows per block of the row-wise kernels: 1,088 rows (a seed batch of 64) make 17 blocks, so
/// two threads share them evenly (9 and 8; with 256 rows a block, 3 and 2); batch 1's 17 rows
/// stay on the calling thread.
const ROWS_PER_BLOCK: usize = 64;

/// Images per block of the attention kernels.
const IMAGES_PER_BLOCK: usize = 4;

/// Whether `blocks` blocks are worth handing to the thread pool: a single block, or a pool of
/// one thread, runs on the calling thread, which a parallel iterator would first hand over.
fn in_parallel(blocks: usize) -> bool {
    #[cfg(not(target_arch = "wasm32"))]
    return blocks > 1 && rayon::current_num_threads() > 1;
    #[cfg(target_arch = "wasm32")]
    {
        let _ = blocks;
        false
    }
}

/// `work(index, block)` for each block of `output`, in parallel where [`in_parallel`] says so.
fn each_block<W>(output: &mut [f32], block: usize, work: W)
where
    W: Fn(usize, &mut [f32]) + Sync,
{
    let block = block.max(1);
    if in_parallel(output.len().div_ceil(block)) {
        #[cfg(not(target_arch = "wasm32"))]
        {
            use rayon::prelude::*;
            output
                .par_chunks_mut(block)
                .enumerate()
                .for_each(|(index, output)| work(index, output));
            return;
        }
    }
    for (index, output) in output.chunks_mut(block).enumerate() {
        work(index, output);
    }
}

/// `work(index, a_block, b_block)` for each pair of blocks of `a` and `b` (as many of each),
/// in parallel where [`in_parallel`] says so.
fn each_block_pair<W>(a: &mut [f32], a_block: usize, b: &mut [f32], b_block: usize, work: W)
where
    W: Fn(usize, &mut [f32], &mut [f32]) + Sync,
{
    let (a_block, b_block) = (a_block.max(1), b_block.max(1));
    if in_parallel(a.len().div_ceil(a_block)) {
        #[cfg(not(target_arch = "wasm32"))]
        {
            use rayon::prelude::*;
            a.par_chunks_mut(a_block)
                .zip(b.par_chunks_mut(b_block))
                .enumerate()
                .for_each(|(index, (a, b))| work(index, a, b));
            return;
        }
    }
    for (index, (a, b)) in a.chunks_mut(a_block).zip(b.chunks_mut(b_block)).enumerate() {
        work(index, a, b);
    }
}

/// The sums of each block's partial sums, in block order.
fn add_partials(partials: &[f32], width: usize) -> Vec<f32> {
    let mut total = vec![0.0f32; width];
    for partial in partials.chunks_exact(width) {
        for (total, partial) in total.iter_mut().zip(partial) {
            *total += partial;
        }
    }
    total
}

/// The sum of each column of a `[rows, width]` table, added up in fixed blocks of rows.
///
/// # Shapes
/// - table: `[rows, width]`
/// - output: `[width]`
pub fn column_sums(table: &[f32], width: usize) -> Vec<f32> {
    let block = ROWS_PER_BLOCK * width.max(1);
    let mut partials = vec![0.0f32; table.len().div_ceil(block) * width];
    each_block(&mut partials, width, |index, partial| {
        let rows = &table[index * block..(index * block + block).min(table.len())];
        add_rows(rows, partial);
    });
    add_partials(&partials, width)
}

#[multiversion(targets("x86_64+avx2"))]
fn add_rows(rows: &[f32], sums: &mut [f32]) {
    for row in rows.chunks_exact(sums.len()) {
        for (sum, value) in sums.iter_mut().zip(row) {
            *sum += value;
        }
    }
}

/// A row's mean and inverse standard deviation (biased variance, as `nn.LayerNorm`).
#[inline(always)]
fn row_statistics(row: &[f32], epsilon: f32) -> (f32, f32) {
    let count = row.len() as f32;
    let mean = sum(row) / count;
    let mut lanes = [0.0f32; 8];
    let mut chunks = row.chunks_exact(8);
    for chunk in &mut chunks {
        for (lane, x) in lanes.iter_mut().zip(chunk) {
            *lane += (x - mean) * (x - mean);
        }
    }
    let rest: f32 = chunks
        .remainder()
        .iter()
        .map(|x| (x - mean) * (x - mean))
        .sum();
    let variance = (sum(&lanes) + rest) / count;
    (mean, 1.0 / (variance + epsilon).sqrt())
}

/// `(x − μ) · σ⁻¹ · gamma + beta`, row by row.
///
/// # Shapes
/// - input, output: `[rows, dim]`
/// - gamma, beta: `[dim]`
pub fn layer_norm(input: &[f32], gamma: &[f32], beta: &[f32], epsilon: f32) -> Vec<f32> {
    let dim = gamma.len();
    let mut output = vec![0.0f32; input.len()];
    let block = ROWS_PER_BLOCK * dim;
    each_block(&mut output, block, |index, output| {
        layer_norm_rows(
            &input[index * block..][..output.len()],
            gamma,
            beta,
            epsilon,
            output,
        )
    });
    output
}

#[multiversion(targets("x86_64+avx2"))]
fn layer_norm_rows(input: &[f32], gamma: &[f32], beta: &[f32], epsilon: f32, output: &mut [f32]) {
    let dim = gamma.len();
    for (x, y) in input.chunks_exact(dim).zip(output.chunks_exact_mut(dim)) {
        let (mean, inverse) = row_statistics(x, epsilon);
        for (((y, x), gamma), beta) in y.iter_mut().zip(x).zip(gamma).zip(beta) {
            *y = (x - mean) * inverse * gamma + beta;
        }
    }
}

/// [`layer_norm`]'s gradients for its input, gamma and beta:
/// `dx = σ⁻¹ · (g − mean(g) − x̂ · mean(g ⊙ x̂))` with `g = dy ⊙ gamma`, `x̂ = (x − μ) · σ⁻¹`;
/// `d_gamma = Σ dy ⊙ x̂` and `d_beta = Σ dy` over the rows.
///
/// # Shapes
/// - input, d_output, d_input: `[rows, dim]`
/// - gamma, d_gamma, d_beta: `[dim]`
pub fn layer_norm_backward(
    input: &[f32],
    gamma: &[f32],
    d_output: &[f32],
    epsilon: f32,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let dim = gamma.len();
    let block = ROWS_PER_BLOCK * dim;
    let mut d_input = vec![0.0f32; input.len()];
    let mut partials = vec![0.0f32; d_input.len().div_ceil(block.max(1)) * 2 * dim];
    each_block_pair(
        &mut d_input,
        block,
        &mut partials,
        2 * dim,
        |index, d_input, partial| {
            let rows = index * block..index * block + d_input.len();
            let (d_gamma, d_beta) = partial.split_at_mut(dim);
            layer_norm_backward_rows(
                &input[rows.clone()],
                gamma,
                &d_output[rows],
                epsilon,
                d_input,
                d_gamma,
                d_beta,
            );
        },
    );
    let total = add_partials(&partials, 2 * dim);
    let (d_gamma, d_beta) = total.split_at(dim);
    (d_input, d_gamma.to_vec(), d_beta.to_vec())
}

#[multiversion(targets("x86_64+avx2"))]
fn layer_norm_backward_rows(
    input: &[f32],
    gamma: &[f32],
    d_output: &[f32],
    epsilon: f32,
    d_input: &mut [f32],
    d_gamma: &mut [f32],
    d_beta: &mut [f32],
) {
    let dim = gamma.len();
    let count = dim as f32;
    let rows = input.chunks_exact(dim).zip(d_output.chunks_exact(dim));
    for ((x, dy), dx) in rows.zip(d_input.chunks_exact_mut(dim)) {
        let (mean, inverse) = row_statistics(x, epsilon);
        // dx holds g = dy ⊙ gamma, then the gradient.
        for ((dx, dy), gamma) in dx.iter_mut().zip(dy).zip(gamma) {
            *dx = dy * gamma;
        }
        let mean_g = sum(dx) / count;
        let mut lanes = [0.0f32; 8];
        let mut chunks = dx.chunks_exact(8).zip(x.chunks_exact(8));
        for (g, x) in &mut chunks {
            for ((lane, g), x) in lanes.iter_mut().zip(g).zip(x) {
                *lane += g * (x - mean);
            }
        }
        let done = dim / 8 * 8;
        let rest: f32 = dx[done..]
            .iter()
            .zip(&x[done..])
            .map(|(g, x)| g * (x - mean))
            .sum();
        let mean_gx = (sum(&lanes) + rest) * inverse / count;
        for (((dx, x), dy), (d_gamma, d_beta)) in dx
            .iter_mut()
            .zip(x)
            .zip(dy)
            .zip(d_gamma.iter_mut().zip(d_beta.iter_mut()))
        {
            let normed = (x - mean) * inverse;
            *dx = inverse * (*dx - mean_g - normed * mean_gx);
            *d_gamma += dy * normed;
            *d_beta += dy;
        }
    }
}

/// What an attention kernel needs to know of its input beyond the values.
#[derive(Clone, Copy, Debug)]
pub struct AttentionShape {
    pub tokens: usize,
    pub heads: usize,
    pub head_dim: usize,
    /// `1/√head_dim`, applied to the scores.
    pub scale: f32,
    /// Dropout on the probabilities: kept with probability `keep` (1: no dropout), the mask
    /// drawn from `seed` as `dropout::keeps` decides.
    pub keep: f32,
    pub seed: u32,
}

/// The widest head the attention kernels take: a head's vectors live in arrays of 8 to this
/// many lanes, zero-padded ([`lanes_for`]); a wider one composes Burn's ops (`mod.rs`).
pub const MAX_HEAD_DIM: usize = 128;

impl AttentionShape {
    fn dim(&self) -> usize {
        self.heads * self.head_dim
    }

    /// Values of one image in the QKV projection's output.
    fn qkv_len(&self) -> usize {
        self.tokens * 3 * self.dim()
    }

    /// Probabilities of one image.
    fn probabilities_len(&self) -> usize {
        self.heads * self.tokens * self.tokens
    }

    /// A row of scores padded to whole vectors of 8.
    fn padded_tokens(&self) -> usize {
        self.tokens.div_ceil(8) * 8
    }

    /// The dropout factors of a row of probabilities whose first element has mask index
    /// `first` (its position in `[batch, heads, tokens, tokens]`, as the GPU kernel counts).
    #[inline(always)]
    fn dropout_factors(&self, first: usize, factors: &mut [f32]) {
        if self.keep >= 1.0 {
            factors.fill(1.0);
            return;
        }
        let scale = 1.0 / self.keep;
        for (offset, factor) in factors.iter_mut().enumerate() {
            *factor = if keeps(self.seed, first + offset, self.keep) {
                scale
            } else {
                0.0
            };
        }
    }
}

/// `head_dim` values as an array of `E ≥ head_dim` lanes, zero beyond: zeros change no dot
/// product and no weighted sum, and fixed-size arrays compile to whole vector operations
/// (a head of 8 is one AVX register) where slices of a run-time length compile to loops.
#[inline(always)]
fn lanes<const E: usize>(values: &[f32]) -> [f32; E] {
    if let Ok(whole) = <&[f32; E]>::try_from(values) {
        return *whole;
    }
    let mut lanes = [0.0f32; E];
    lanes[..values.len()].copy_from_slice(values);
    lanes
}

/// A head's `into.len()` values from the lanes that hold them. A copy of a run-time length is
/// a call to `memmove` (as is a loop copying element by element, which the compiler turns into
/// one), which for a head's few values costs more than the copy itself (`perf`: 6.8 % of a
/// step, nearly all of it from these kernels); a whole array is two vector moves.
#[inline(always)]
fn put_lanes<const E: usize>(into: &mut [f32], from: &[f32; E]) {
    match <&mut [f32; E]>::try_from(&mut *into) {
        Ok(whole) => *whole = *from,
        Err(_) => into.copy_from_slice(&from[..into.len()]),
    }
}

/// The largest of `values`, eight lanes at a time (`f32::max` one at a time is a compare, a
/// NaN test and a blend per element).
#[inline(always)]
fn maximum(values: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; 8];
    let mut chunks = values.chunks_exact(8);
    for chunk in &mut chunks {
        for (lane, value) in lanes.iter_mut().zip(chunk) {
            *lane = if *value > *lane { *value } else { *lane };
        }
    }
    let rest = chunks
        .remainder()
        .iter()
        .fold(f32::NEG_INFINITY, |m, v| m.max(*v));
    lanes.iter().fold(rest, |m, v| m.max(*v))
}

/// `row = Σᵢ scales[i] · from[i]` for rows of `from` padded to whole vectors of 8 (`from` is
/// `[scales.len(), row.len()]`), a vector of `row` at a time held in registers across `i`.
#[inline(always)]
fn weighted_rows(row: &mut [f32], scales: &[f32], from: &[f32]) {
    let width = row.len();
    for (chunk, out) in row.chunks_exact_mut(8).enumerate() {
        let mut sum = [0.0f32; 8];
        for (i, scale) in scales.iter().enumerate() {
            let Ok(from) = <&[f32; 8]>::try_from(&from[i * width + chunk * 8..][..8]) else {
                continue;
            };
            for (sum, from) in sum.iter_mut().zip(from) {
                *sum += scale * from;
            }
        }
        put_lanes(out, &sum);
    }
}

/// `into += scale · from` on whole arrays. Read into a local array first: written in place,
/// the compiler cannot rule out that `into` and `from` overlap once inlined, and updates
/// them one lane at a time (`perf annotate`: scalar `vmulss`, 8 to a vector's work).
#[inline(always)]
fn add_scaled_lanes<const E: usize>(into: &mut [f32; E], scale: f32, from: &[f32; E]) {
    let mut sum = *into;
    for (sum, from) in sum.iter_mut().zip(from) {
        *sum += scale * from;
    }
    *into = sum;
}

/// One head's vectors of one image, gathered from the QKV projection's output.
struct HeadScratch<const E: usize> {
    /// `[tokens]` rows of q, k, v.
    rows: Vec<[f32; E]>,
    rows_2: Vec<[f32; E]>,
    rows_3: Vec<[f32; E]>,
    /// One of k, v transposed, `[E, padded tokens]`, zero in the padding.
    transposed: Vec<f32>,
    /// A row of scores (or their gradient), of probabilities and its dropout factors,
    /// `[padded tokens]`, zero (factors: one) in the padding: every loop over a row runs
    /// whole vectors (a loop of a run-time length `take(n)` ran one lane at a time: 9 % of the
    /// backward kernel in `perf annotate`).
    row: Vec<f32>,
    row_2: Vec<f32>,
    factors: Vec<f32>,
}

impl<const E: usize> HeadScratch<E> {
    fn new(shape: &AttentionShape) -> Self {
        let padded = shape.padded_tokens();
        Self {
            rows: vec![[0.0; E]; shape.tokens],
            rows_2: vec![[0.0; E]; shape.tokens],
            rows_3: vec![[0.0; E]; shape.tokens],
            transposed: vec![0.0; E * padded],
            row: vec![0.0; padded],
            row_2: vec![0.0; padded],
            factors: vec![1.0; padded],
        }
    }
}

/// One head's q, k and v rows of one image (`qkv`: `[tokens, 3 · dim]`), each as lanes.
#[inline(always)]
fn gather_head<const E: usize>(
    qkv: &[f32],
    shape: &AttentionShape,
    head: usize,
    [queries, keys, values]: [&mut [[f32; E]]; 3],
) {
    let (dim, head_dim) = (shape.dim(), shape.head_dim);
    let rows = qkv.chunks_exact(3 * dim);
    let lanes_of = rows.zip(
        queries
            .iter_mut()
            .zip(keys.iter_mut())
            .zip(values.iter_mut()),
    );
    for (row, ((q, k), v)) in lanes_of {
        let head_of = |part: usize| &row[part * dim + head * head_dim..][..head_dim];
        (*q, *k, *v) = (lanes(head_of(0)), lanes(head_of(1)), lanes(head_of(2)));
    }
}

/// `transposed = rowsᵀ`, `[E, padded tokens]` from `[tokens, E]`: a column at a time, so the
/// lane index is fixed in the inner loop (element by element with an index per element, the
/// bounds checks made the backward kernel's costliest loop: 11 % in `perf annotate`).
#[inline(always)]
fn transpose<const E: usize>(rows: &[[f32; E]], transposed: &mut [f32]) {
    let padded = transposed.len() / E;
    for (lane, column) in transposed.chunks_exact_mut(padded).enumerate() {
        for (slot, row) in column.iter_mut().zip(rows) {
            *slot = row[lane];
        }
    }
}

/// `row = from` followed by zeros, in whole vectors where `from` allows.
#[inline(always)]
fn fill_padded(row: &mut [f32], from: &[f32]) {
    for (into, from) in row.chunks_exact_mut(8).zip(from.chunks(8)) {
        match (
            <&mut [f32; 8]>::try_from(&mut *into),
            <&[f32; 8]>::try_from(from),
        ) {
            (Ok(into), Ok(from)) => *into = *from,
            _ => {
                into.fill(0.0);
                for (into, from) in into.iter_mut().zip(from) {
                    *into = *from;
                }
            }
        }
    }
}

/// The lanes a head of `head_dim` values takes: 8, 16, 32, 64 or 128.
pub fn lanes_for(head_dim: usize) -> Option<usize> {
    [8, 16, 32, 64, MAX_HEAD_DIM]
        .into_iter()
        .find(|&lanes| head_dim <= lanes)
}

/// Attention from the fused QKV projection's output: the heads' outputs side by side (after
/// dropout on the probabilities) and the probabilities before dropout.
///
/// # Shapes
/// - qkv: `[batch, tokens, 3 · dim]`: q, k, v, each `heads` slices of `head_dim`
/// - mixed: `[batch, tokens, dim]`
/// - probabilities: `[batch, heads, tokens, tokens]`
pub fn attention(qkv: &[f32], shape: AttentionShape) -> (Vec<f32>, Vec<f32>) {
    let batch = qkv.len() / shape.qkv_len().max(1);
    let mut mixed = vec![0.0f32; batch * shape.tokens * shape.dim()];
    let mut probabilities = vec![0.0f32; batch * shape.probabilities_len()];
    let (mixed_block, probabilities_block) = (
        IMAGES_PER_BLOCK * shape.tokens * shape.dim(),
        IMAGES_PER_BLOCK * shape.probabilities_len(),
    );
    each_block_pair(
        &mut mixed,
        mixed_block,
        &mut probabilities,
        probabilities_block,
        |index, mixed, probabilities| {
            let first = index * IMAGES_PER_BLOCK;
            let images = probabilities.len() / shape.probabilities_len();
            let qkv = &qkv[first * shape.qkv_len()..][..images * shape.qkv_len()];
            attention_images(qkv, shape, first, mixed, probabilities);
        },
    );
    (mixed, probabilities)
}

#[multiversion(targets("x86_64+avx2"))]
fn attention_images(
    qkv: &[f32],
    shape: AttentionShape,
    first_image: usize,
    mixed: &mut [f32],
    probabilities: &mut [f32],
) {
    match lanes_for(shape.head_dim) {
        Some(8) => attention_heads::<8>(qkv, shape, first_image, mixed, probabilities),
        Some(16) => attention_heads::<16>(qkv, shape, first_image, mixed, probabilities),
        Some(32) => attention_heads::<32>(qkv, shape, first_image, mixed, probabilities),
        Some(64) => attention_heads::<64>(qkv, shape, first_image, mixed, probabilities),
        _ => attention_heads::<MAX_HEAD_DIM>(qkv, shape, first_image, mixed, probabilities),
    }
}

#[inline(always)]
fn attention_heads<const E: usize>(
    qkv: &[f32],
    shape: AttentionShape,
    first_image: usize,
    mixed: &mut [f32],
    probabilities: &mut [f32],
) {
    let AttentionShape {
        tokens: n,
        heads,
        head_dim,
        scale,
        ..
    } = shape;
    let dim = shape.dim();
    let mut scratch = HeadScratch::<E>::new(&shape);
    let images = qkv
        .chunks_exact(shape.qkv_len())
        .zip(mixed.chunks_exact_mut(n * dim))
        .zip(probabilities.chunks_exact_mut(shape.probabilities_len()));
    for (image, ((qkv, mixed), probabilities)) in images.enumerate() {
        for head in 0..heads {
            let HeadScratch {
                rows: queries,
                rows_2: key_rows,
                rows_3: values,
                transposed: keys,
                row,
                factors,
                ..
            } = &mut scratch;
            gather_head(qkv, &shape, head, [queries, key_rows, values]);
            transpose(key_rows, keys);
            for (query, q) in queries.iter().enumerate() {
                weighted_rows(row, &q[..head_dim], keys);
                let max = maximum(&row[..n]);
                for score in row.iter_mut() {
                    *score = exp((*score - max) * scale);
                }
                row[n..].fill(0.0);
                let inverse = 1.0 / sum(row);
                for weight in row.iter_mut() {
                    *weight *= inverse;
                }
                let row_index = head * n + query;
                probabilities[row_index * n..][..n].copy_from_slice(&row[..n]);
                let mask_index = ((first_image + image) * heads * n + row_index) * n;
                shape.dropout_factors(mask_index, &mut factors[..n]);
                let mut out = [0.0f32; E];
                for ((weight, factor), value) in row.iter().zip(factors.iter()).zip(values.iter()) {
                    add_scaled_lanes(&mut out, weight * factor, value);
                }
                put_lanes(
                    &mut mixed[query * dim + head * head_dim..][..head_dim],
                    &out,
                );
            }
        }
    }
}

/// [`attention`]'s gradient for the QKV projection's output, from the probabilities it wrote:
/// `dP = dO · vᵀ` (through the dropout mask), `dS = P ⊙ (dP − Σ P ⊙ dP)`,
/// `dq = scale · dS · k`, `dk = scale · dSᵀ · q`, `dv = (P ⊙ mask)ᵀ · dO`.
///
/// # Shapes
/// - qkv, output: `[batch, tokens, 3 · dim]`
/// - probabilities: `[batch, heads, tokens, tokens]`
/// - d_mixed: `[batch, tokens, dim]`
pub fn attention_backward(
    qkv: &[f32],
    probabilities: &[f32],
    d_mixed: &[f32],
    shape: AttentionShape,
) -> Vec<f32> {
    let mut d_qkv = vec![0.0f32; qkv.len()];
    let block = IMAGES_PER_BLOCK * shape.qkv_len();
    each_block(&mut d_qkv, block, |index, d_qkv| {
        let first = index * IMAGES_PER_BLOCK;
        let images = d_qkv.len() / shape.qkv_len();
        let per_image = shape.tokens * shape.dim();
        attention_backward_images(
            &qkv[first * shape.qkv_len()..][..d_qkv.len()],
            &probabilities[first * shape.probabilities_len()..]
                [..images * shape.probabilities_len()],
            &d_mixed[first * per_image..][..images * per_image],
            shape,
            first,
            d_qkv,
        );
    });
    d_qkv
}

#[multiversion(targets("x86_64+avx2"))]
fn attention_backward_images(
    qkv: &[f32],
    probabilities: &[f32],
    d_mixed: &[f32],
    shape: AttentionShape,
    first_image: usize,
    d_qkv: &mut [f32],
) {
    let block = BackwardBlock {
        qkv,
        probabilities,
        d_mixed,
        first_image,
    };
    match lanes_for(shape.head_dim) {
        Some(8) => attention_backward_heads::<8>(block, shape, d_qkv),
        Some(16) => attention_backward_heads::<16>(block, shape, d_qkv),
        Some(32) => attention_backward_heads::<32>(block, shape, d_qkv),
        Some(64) => attention_backward_heads::<64>(block, shape, d_qkv),
        _ => attention_backward_heads::<MAX_HEAD_DIM>(block, shape, d_qkv),
    }
}

/// The inputs of [`attention_backward_heads`] for a block of images.
#[derive(Clone, Copy)]
struct BackwardBlock<'a> {
    qkv: &'a [f32],
    probabilities: &'a [f32],
    d_mixed: &'a [f32],
    /// The first image's index in the batch (for the dropout mask).
    first_image: usize,
}

#[inline(always)]
fn attention_backward_heads<const E: usize>(
    block: BackwardBlock<'_>,
    shape: AttentionShape,
    d_qkv: &mut [f32],
) {
    let BackwardBlock {
        qkv,
        probabilities,
        d_mixed,
        first_image,
    } = block;
    let AttentionShape {
        tokens: n,
        heads,
        head_dim,
        scale,
        ..
    } = shape;
    let dim = shape.dim();
    let width = 3 * dim;
    let mut scratch = HeadScratch::<E>::new(&shape);
    // The head's key and value gradients, written out once every query has added to them.
    let mut d_keys = vec![[0.0f32; E]; n];
    let mut d_values = vec![[0.0f32; E]; n];
    let images = qkv
        .chunks_exact(shape.qkv_len())
        .zip(probabilities.chunks_exact(shape.probabilities_len()))
        .zip(d_mixed.chunks_exact(n * dim))
        .zip(d_qkv.chunks_exact_mut(shape.qkv_len()));
    for (image, (((qkv, probabilities), d_mixed), d_qkv)) in images.enumerate() {
        for head in 0..heads {
            let HeadScratch {
                rows: queries,
                rows_2: keys,
                rows_3: value_rows,
                transposed: values,
                row: d_scores,
                row_2: p,
                factors,
            } = &mut scratch;
            let at = |token: usize, part: usize| token * width + part * dim + head * head_dim;
            gather_head(qkv, &shape, head, [queries, keys, value_rows]);
            transpose(value_rows, values);
            d_keys.fill([0.0; E]);
            d_values.fill([0.0; E]);
            for (query, q) in queries.iter().enumerate() {
                let row_index = head * n + query;
                fill_padded(p, &probabilities[row_index * n..][..n]);
                let d_out: [f32; E] = lanes(&d_mixed[query * dim + head * head_dim..][..head_dim]);
                weighted_rows(d_scores, &d_out[..head_dim], values);
                let mask_index = ((first_image + image) * heads * n + row_index) * n;
                shape.dropout_factors(mask_index, &mut factors[..n]);
                for (d, factor) in d_scores.iter_mut().zip(factors.iter()) {
                    *d *= factor;
                }
                let weighted = dot(p, d_scores);
                for (d, p) in d_scores.iter_mut().zip(p.iter()) {
                    *d = p * (*d - weighted) * scale;
                }
                let mut d_q = [0.0f32; E];
                let per_token = keys
                    .iter()
                    .zip(d_keys.iter_mut())
                    .zip(d_values.iter_mut())
                    .zip(d_scores.iter().zip(p.iter().zip(factors.iter())));
                for (((key, d_key), d_value), (d_score, (p, factor))) in per_token {
                    add_scaled_lanes(&mut d_q, *d_score, key);
                    add_scaled_lanes(d_key, *d_score, q);
                    add_scaled_lanes(d_value, p * factor, &d_out);
                }
                put_lanes(&mut d_qkv[at(query, 0)..][..head_dim], &d_q);
            }
            for (token, (d_key, d_value)) in d_keys.iter().zip(&d_values).enumerate() {
                put_lanes(&mut d_qkv[at(token, 1)..][..head_dim], d_key);
                put_lanes(&mut d_qkv[at(token, 2)..][..head_dim], d_value);
            }
        }
    }
}

/// `gelu(input + bias)`, row by row.
///
/// # Shapes
/// - input, output: `[rows, width]`
/// - bias: `[width]`
pub fn bias_gelu(input: &[f32], bias: &[f32]) -> Vec<f32> {
    let mut output = vec![0.0f32; input.len()];
    let block = ROWS_PER_BLOCK * bias.len();
    each_block(&mut output, block, |index, output| {
        bias_gelu_rows(&input[index * block..][..output.len()], bias, output)
    });
    output
}

#[multiversion(targets("x86_64+avx2"))]
fn bias_gelu_rows(input: &[f32], bias: &[f32], output: &mut [f32]) {
    let width = bias.len();
    for (x, y) in input
        .chunks_exact(width)
        .zip(output.chunks_exact_mut(width))
    {
        for ((y, x), b) in y.iter_mut().zip(x).zip(bias) {
            *y = gelu(x + b);
        }
    }
}

/// [`bias_gelu`]'s gradients for its input and bias: `dx = dy ⊙ gelu′(x + b)`, `db = Σ dx`.
///
/// # Shapes
/// - input, d_output, d_input: `[rows, width]`
/// - bias, d_bias: `[width]`
pub fn bias_gelu_backward(input: &[f32], bias: &[f32], d_output: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let width = bias.len();
    let block = ROWS_PER_BLOCK * width;
    let mut d_input = vec![0.0f32; input.len()];
    let mut partials = vec![0.0f32; d_input.len().div_ceil(block.max(1)) * width];
    each_block_pair(
        &mut d_input,
        block,
        &mut partials,
        width,
        |index, d_input, d_bias| {
            let rows = index * block..index * block + d_input.len();
            bias_gelu_backward_rows(&input[rows.clone()], bias, &d_output[rows], d_input, d_bias);
        },
    );
    (d_input, add_partials(&partials, width))
}

#[multiversion(targets("x86_64+avx2"))]
fn bias_gelu_backward_rows(
    input: &[f32],
    bias: &[f32],
    d_output: &[f32],
    d_input: &mut [f32],
    d_bias: &mut [f32],
) {
    let width = bias.len();
    let rows = input.chunks_exact(width).zip(d_output.chunks_exact(width));
    for ((x, dy), dx) in rows.zip(d_input.chunks_exact_mut(width)) {
        for ((((dx, x), dy), b), d_bias) in dx
            .iter_mut()
            .zip(x)
            .zip(dy)
            .zip(bias)
            .zip(d_bias.iter_mut())
        {
            *dx = dy * gelu_derivative(x + b);
            *d_bias += *dx;
        }
    }
}

/// `input + bias + residual`, row by row.
///
/// # Shapes
/// - input, residual, output: `[rows, width]`
/// - bias: `[width]`
pub fn bias_residual(input: &[f32], bias: &[f32], residual: &[f32]) -> Vec<f32> {
    let width = bias.len();
    let mut output = residual.to_vec();
    for (y, x) in output
        .chunks_exact_mut(width)
        .zip(input.chunks_exact(width))
    {
        for ((y, x), b) in y.iter_mut().zip(x).zip(bias) {
            *y += x + b;
        }
    }
    output
}
