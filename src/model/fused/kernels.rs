//! The CubeCL kernels behind [`super`]: each replaces a chain of Burn operations (and the
//! layout copies between them) with one dispatch. Inputs are contiguous, row-major.
//!
//! One unit (GPU thread) per row: rows here are a token's `D` features or one query's `N`
//! scores, a few dozen values, so a unit's loops are short and no unit waits on another.

use cubecl::prelude::*;

/// LayerNorm over the last axis: `(x - mean) / sqrt(var + epsilon) · gamma + beta`, with the
/// biased variance, as PyTorch's `nn.LayerNorm`.
///
/// # Shapes
/// - input, output: `[rows, dim]` (any leading axes flattened)
/// - gamma, beta: `[dim]`
#[cube(launch)]
pub fn layer_norm<F: Float>(
    input: &Tensor<F>,
    gamma: &Tensor<F>,
    beta: &Tensor<F>,
    output: &mut Tensor<F>,
    epsilon: f32,
    #[define(F)] _dtype: ElemType,
) {
    let dim = gamma.len();
    let row = ABSOLUTE_POS;
    if row * dim >= input.len() {
        terminate!();
    }
    let start = row * dim;
    let (mean, scale) = row_statistics(input, start, dim, epsilon);
    for i in 0..dim {
        output[start + i] = (input[start + i] - mean) * scale * gamma[i] + beta[i];
    }
}

/// The mean and inverse standard deviation of the `dim` values of `input` from `start`, with
/// the biased variance: LayerNorm's statistics of one row.
#[cube]
fn row_statistics<F: Float>(input: &Tensor<F>, start: usize, dim: usize, epsilon: f32) -> (F, F) {
    let count = F::cast_from(dim as u32);
    let mut sum = F::new(0.0_f32);
    for i in 0..dim {
        sum += input[start + i];
    }
    let mean = sum / count;
    let mut squares = F::new(0.0_f32);
    for i in 0..dim {
        let centred = input[start + i] - mean;
        squares += centred * centred;
    }
    (
        mean,
        F::new(1.0_f32) / (squares / count + F::cast_from(epsilon)).sqrt(),
    )
}

/// Multi-head self-attention from the fused QKV projection, eq. 2 of the paper's appendix:
/// softmax(q·kᵀ · scale) · v per head. Writes the probabilities (what the heatmaps show) and
/// the heads' outputs side by side, as the output projection takes them, so neither the QKV
/// split nor the heads' merge is a copy of its own.
///
/// In training the probabilities go through dropout before they weigh the values: each is
/// kept with probability `keep` (and scaled by `1 / keep`) as [`keeps`] decides from `seed`
/// and its position, so the backward pass draws the same mask without storing it. `keep = 1`
/// is no dropout. The probabilities written are those before dropout, as Burn's ops give.
///
/// One unit per (image, head, query).
///
/// # Shapes
/// - qkv: `[batch, tokens, 3 · dim]`: q, k, v, each `heads` slices of `dim / heads`
/// - mixed: `[batch, tokens, dim]`
/// - probabilities: `[batch, heads, tokens, tokens]`
#[cube(launch)]
pub fn attention<F: Float>(
    qkv: &Tensor<F>,
    mixed: &mut Tensor<F>,
    probabilities: &mut Tensor<F>,
    heads: u32,
    scale: f32,
    keep: f32,
    seed: u32,
    #[define(F)] _dtype: ElemType,
) {
    let heads = heads as usize;
    let tokens = qkv.shape(1);
    let width = qkv.shape(2);
    let dim = width / 3;
    let head_dim = dim / heads;
    let unit = ABSOLUTE_POS;
    if unit >= qkv.shape(0) * heads * tokens {
        terminate!();
    }
    let query = unit % tokens;
    let head = (unit / tokens) % heads;
    let image = unit / (tokens * heads);
    let scale = F::cast_from(scale);

    let q = (image * tokens + query) * width + head * head_dim;
    let row = ((image * heads + head) * tokens + query) * tokens;

    // Scores, kept in the probabilities' row, and their maximum (for a stable softmax).
    let mut max = F::new(-3.0e38_f32);
    for token in 0..tokens {
        let k = (image * tokens + token) * width + dim + head * head_dim;
        let mut score = F::new(0.0_f32);
        for i in 0..head_dim {
            score += qkv[q + i] * qkv[k + i];
        }
        score *= scale;
        probabilities[row + token] = score;
        if score > max {
            max = score;
        }
    }
    let mut total = F::new(0.0_f32);
    for token in 0..tokens {
        let weight = (probabilities[row + token] - max).exp();
        probabilities[row + token] = weight;
        total += weight;
    }
    let inverse = F::new(1.0_f32) / total;
    for token in 0..tokens {
        probabilities[row + token] *= inverse;
    }
    let out = (image * tokens + query) * dim + head * head_dim;
    for i in 0..head_dim {
        let mut sum = F::new(0.0_f32);
        for token in 0..tokens {
            let v = (image * tokens + token) * width + 2 * dim + head * head_dim;
            let weight = probabilities[row + token] * dropped::<F>(seed, row + token, keep);
            sum += weight * qkv[v + i];
        }
        mixed[out + i] = sum;
    }
}

/// Whether dropout keeps element `index` of a mask drawn from `seed`: a hash of the two (the
/// finaliser of MurmurHash3), below `keep` as a fraction of 2³².
#[cube]
pub fn keeps(seed: u32, index: usize, keep: f32) -> bool {
    let mut x = (index as u32) ^ seed;
    x ^= x >> 16;
    x *= 0x85eb_ca6b_u32;
    x ^= x >> 13;
    x *= 0xc2b2_ae35_u32;
    x ^= x >> 16;
    f32::cast_from(x >> 8) * (1.0_f32 / 16_777_216.0_f32) < keep
}

/// The dropout factor of element `index`: `1 / keep` where [`keeps`], 0 elsewhere; 1 with no
/// dropout (`keep >= 1`).
#[cube]
pub fn dropped<F: Float>(seed: u32, index: usize, keep: f32) -> F {
    let mut factor = F::new(1.0_f32);
    if keep < 1.0_f32 {
        factor = F::new(0.0_f32);
        if keeps(seed, index, keep) {
            factor = F::cast_from(1.0_f32 / keep);
        }
    }
    factor
}

/// The gradient of [`attention`] for the queries, and the scores' gradient the keys and
/// values need (in `scores`). One unit per (image, head, query):
/// `dP = dO · vᵀ` (through the dropout mask), `dS = P ⊙ (dP − Σ P ⊙ dP)`, `dq = scale · dS · k`.
///
/// # Shapes
/// - qkv, d_qkv: `[batch, tokens, 3 · dim]` (this writes the q part of `d_qkv`)
/// - probabilities, scores: `[batch, heads, tokens, tokens]`
/// - d_mixed: `[batch, tokens, dim]`
#[cube(launch)]
pub fn attention_backward_queries<F: Float>(
    qkv: &Tensor<F>,
    probabilities: &Tensor<F>,
    d_mixed: &Tensor<F>,
    scores: &mut Tensor<F>,
    d_qkv: &mut Tensor<F>,
    heads: u32,
    scale: f32,
    keep: f32,
    seed: u32,
    #[define(F)] _dtype: ElemType,
) {
    let heads = heads as usize;
    let tokens = qkv.shape(1);
    let width = qkv.shape(2);
    let dim = width / 3;
    let head_dim = dim / heads;
    let unit = ABSOLUTE_POS;
    if unit >= qkv.shape(0) * heads * tokens {
        terminate!();
    }
    let query = unit % tokens;
    let head = (unit / tokens) % heads;
    let image = unit / (tokens * heads);
    let row = ((image * heads + head) * tokens + query) * tokens;
    let d_out = (image * tokens + query) * dim + head * head_dim;

    // dP, kept in `scores`, and Σ P ⊙ dP.
    let mut weighted = F::new(0.0_f32);
    for token in 0..tokens {
        let v = (image * tokens + token) * width + 2 * dim + head * head_dim;
        let mut d_p = F::new(0.0_f32);
        for i in 0..head_dim {
            d_p += d_mixed[d_out + i] * qkv[v + i];
        }
        d_p *= dropped::<F>(seed, row + token, keep);
        scores[row + token] = d_p;
        weighted += probabilities[row + token] * d_p;
    }
    for token in 0..tokens {
        scores[row + token] = probabilities[row + token] * (scores[row + token] - weighted);
    }
    let q = (image * tokens + query) * width + head * head_dim;
    let scale = F::cast_from(scale);
    for i in 0..head_dim {
        let mut sum = F::new(0.0_f32);
        for token in 0..tokens {
            let k = (image * tokens + token) * width + dim + head * head_dim;
            sum += scores[row + token] * qkv[k + i];
        }
        d_qkv[q + i] = sum * scale;
    }
}

/// The gradient of [`attention`] for the keys and values, from the scores' gradient that
/// [`attention_backward_queries`] left. One unit per (image, head, key):
/// `dk = scale · dSᵀ · q`, `dv = (P ⊙ mask)ᵀ · dO`.
///
/// # Shapes
/// - qkv, d_qkv: `[batch, tokens, 3 · dim]` (this writes the k and v parts of `d_qkv`)
/// - probabilities, scores: `[batch, heads, tokens, tokens]`
/// - d_mixed: `[batch, tokens, dim]`
#[cube(launch)]
pub fn attention_backward_keys<F: Float>(
    qkv: &Tensor<F>,
    probabilities: &Tensor<F>,
    d_mixed: &Tensor<F>,
    scores: &Tensor<F>,
    d_qkv: &mut Tensor<F>,
    heads: u32,
    scale: f32,
    keep: f32,
    seed: u32,
    #[define(F)] _dtype: ElemType,
) {
    let heads = heads as usize;
    let tokens = qkv.shape(1);
    let width = qkv.shape(2);
    let dim = width / 3;
    let head_dim = dim / heads;
    let unit = ABSOLUTE_POS;
    if unit >= qkv.shape(0) * heads * tokens {
        terminate!();
    }
    let key = unit % tokens;
    let head = (unit / tokens) % heads;
    let image = unit / (tokens * heads);
    let column = (image * heads + head) * tokens * tokens + key;
    let k = (image * tokens + key) * width + dim + head * head_dim;
    let scale = F::cast_from(scale);
    for i in 0..head_dim {
        let mut d_k = F::new(0.0_f32);
        let mut d_v = F::new(0.0_f32);
        for query in 0..tokens {
            let at = column + query * tokens;
            let q = (image * tokens + query) * width + head * head_dim;
            let d_out = (image * tokens + query) * dim + head * head_dim;
            d_k += scores[at] * qkv[q + i];
            d_v += probabilities[at] * dropped::<F>(seed, at, keep) * d_mixed[d_out + i];
        }
        d_qkv[k + i] = d_k * scale;
        d_qkv[k + dim + i] = d_v;
    }
}

/// The gradient of [`layer_norm`] for its input, per row, with each row's mean and inverse
/// standard deviation (for [`layer_norm_backward_parameters`]):
/// `dx = σ⁻¹ · (g − mean(g) − x̂ · mean(g ⊙ x̂))` with `g = dy ⊙ gamma`, `x̂ = (x − μ) · σ⁻¹`.
///
/// # Shapes
/// - input, d_output, d_input: `[rows, dim]`
/// - gamma: `[dim]`
/// - statistics: `[rows, 2]`: mean, inverse standard deviation
#[cube(launch)]
pub fn layer_norm_backward_input<F: Float>(
    input: &Tensor<F>,
    gamma: &Tensor<F>,
    d_output: &Tensor<F>,
    d_input: &mut Tensor<F>,
    statistics: &mut Tensor<F>,
    epsilon: f32,
    #[define(F)] _dtype: ElemType,
) {
    let dim = gamma.len();
    let row = ABSOLUTE_POS;
    if row * dim >= input.len() {
        terminate!();
    }
    let start = row * dim;
    let count = F::cast_from(dim as u32);
    let (mean, inverse) = row_statistics(input, start, dim, epsilon);
    let mut sum_g = F::new(0.0_f32);
    let mut sum_gx = F::new(0.0_f32);
    for i in 0..dim {
        let g = d_output[start + i] * gamma[i];
        sum_g += g;
        sum_gx += g * (input[start + i] - mean) * inverse;
    }
    let mean_g = sum_g / count;
    let mean_gx = sum_gx / count;
    for i in 0..dim {
        let g = d_output[start + i] * gamma[i];
        let normed = (input[start + i] - mean) * inverse;
        d_input[start + i] = inverse * (g - mean_g - normed * mean_gx);
    }
    statistics[row * 2] = mean;
    statistics[row * 2 + 1] = inverse;
}

/// The gradients of [`layer_norm`]'s gamma and beta: `Σ dy ⊙ x̂` and `Σ dy` over the rows.
/// One unit per feature, over every row.
///
/// # Shapes
/// - input, d_output: `[rows, dim]`
/// - statistics: `[rows, 2]` from [`layer_norm_backward_input`]
/// - d_gamma, d_beta: `[dim]`
#[cube(launch)]
pub fn layer_norm_backward_parameters<F: Float>(
    input: &Tensor<F>,
    d_output: &Tensor<F>,
    statistics: &Tensor<F>,
    d_gamma: &mut Tensor<F>,
    d_beta: &mut Tensor<F>,
    #[define(F)] _dtype: ElemType,
) {
    let dim = d_gamma.len();
    let feature = ABSOLUTE_POS;
    if feature >= dim {
        terminate!();
    }
    let rows = input.len() / dim;
    let mut gamma = F::new(0.0_f32);
    let mut beta = F::new(0.0_f32);
    for row in 0..rows {
        let at = row * dim + feature;
        let normed = (input[at] - statistics[row * 2]) * statistics[row * 2 + 1];
        gamma += d_output[at] * normed;
        beta += d_output[at];
    }
    d_gamma[feature] = gamma;
    d_beta[feature] = beta;
}

/// `gelu(input + bias)`, the exact GELU (with erf), as PyTorch's `nn.GELU()`: the first
/// MLP layer's bias and activation in one pass.
///
/// # Shapes
/// - input, output: `[rows, width]`
/// - bias: `[width]`
#[cube(launch)]
pub fn bias_gelu<F: Float>(
    input: &Tensor<F>,
    bias: &Tensor<F>,
    output: &mut Tensor<F>,
    #[define(F)] _dtype: ElemType,
) {
    let index = ABSOLUTE_POS;
    if index >= input.len() {
        terminate!();
    }
    let x = input[index] + bias[index % bias.len()];
    output[index] = x
        * F::new(0.5_f32)
        * (F::new(1.0_f32) + (x * F::new(core::f32::consts::FRAC_1_SQRT_2)).erf());
}

/// `input + bias + residual`: a projection's bias and the block's residual connection in one
/// pass.
///
/// # Shapes
/// - input, residual, output: `[rows, width]`
/// - bias: `[width]`
#[cube(launch)]
pub fn bias_residual<F: Float>(
    input: &Tensor<F>,
    bias: &Tensor<F>,
    residual: &Tensor<F>,
    output: &mut Tensor<F>,
    #[define(F)] _dtype: ElemType,
) {
    let index = ABSOLUTE_POS;
    if index >= input.len() {
        terminate!();
    }
    output[index] = input[index] + bias[index % bias.len()] + residual[index];
}
