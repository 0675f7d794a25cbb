//! Multi-head self-attention (Eq. 2's MSA): one fused QKV projection, scaled dot products, the
//! heads' outputs side by side and projected; the attention probabilities come back beside the
//! output, for the lab's maps and the relevance.

use burn::module::Module;
use burn::nn::{Dropout, DropoutConfig, Linear, LinearConfig};
use burn::tensor::activation::softmax;
use burn::tensor::{Device, Tensor};

use super::{VitConfig, dropout, fused};

/// Multi-head self-attention with one fused, bias-free QKV projection, as in the seed.
#[derive(Module, Debug)]
pub struct MultiHeadAttention {
    /// `[D → 3·D]`, no bias; output columns are q, k, v, each split into heads.
    pub qkv: Linear,
    /// `[D → D]`.
    pub proj: Linear,
    pub dropout: Dropout,
    pub heads: usize,
}

impl MultiHeadAttention {
    pub fn new(config: &VitConfig, device: &Device) -> Self {
        Self {
            qkv: LinearConfig::new(config.dim, 3 * config.dim)
                .with_bias(false)
                .init(device),
            proj: LinearConfig::new(config.dim, config.dim).init(device),
            dropout: DropoutConfig::new(config.dropout).init(),
            heads: config.heads,
        }
    }

    /// Returns the attended tokens and the attention probabilities (before dropout), which
    /// the heatmaps show.
    ///
    /// # Shapes
    /// - tokens: `[batch, tokens, dim]`
    /// - output: `[batch, tokens, dim]`
    /// - attention: `[batch, heads, tokens, tokens]`, each row summing to 1
    pub fn forward(&self, tokens: Tensor<3>) -> (Tensor<3>, Tensor<4>) {
        let (mixed, attention) = self.attend(tokens); // [B, N, D], [B, H, N, N]
        let output = dropout(&self.dropout, fused::linear(&self.proj, &mixed)); // [B, N, D]
        (output, attention)
    }

    /// The heads' outputs side by side, before the output projection, and the attention
    /// probabilities: one fused kernel on a GPU (see [`fused`]), Burn's ops elsewhere.
    ///
    /// # Shapes
    /// - tokens: `[batch, tokens, dim]`
    /// - mixed: `[batch, tokens, dim]`
    /// - attention: `[batch, heads, tokens, tokens]`
    pub fn attend(&self, tokens: Tensor<3>) -> (Tensor<3>, Tensor<4>) {
        self.attend_probed(tokens, None)
    }

    /// [`Self::attend`] with `probe` added to the attention probabilities the values are mixed
    /// with (the returned attention is without it). A zero probe that requires a gradient
    /// changes nothing but receives `∂output/∂attention`, which Burn keeps for leaves only:
    /// the gradient relevance (`analysis::relevance`) asks for it. Always Burn's ops.
    ///
    /// # Shapes
    /// - tokens: `[batch, tokens, dim]`
    /// - probe: `[batch, heads, tokens, tokens]`
    /// - mixed: `[batch, tokens, dim]`
    /// - attention: `[batch, heads, tokens, tokens]`
    pub fn attend_probed(
        &self,
        tokens: Tensor<3>,
        probe: Option<Tensor<4>>,
    ) -> (Tensor<3>, Tensor<4>) {
        let qkv = fused::linear(&self.qkv, &tokens); // [B, N, 3·D]
        if probe.is_none()
            && let Some(fused) = fused::attention(&qkv, self.heads, &self.dropout)
        {
            return fused;
        }
        let [batch, n, width] = qkv.dims();
        let dim = width / 3;
        let head_dim = dim / self.heads;
        let qkv = qkv
            .reshape([batch, n, 3, self.heads, head_dim]) // [B, N, 3, H, D/H]
            .permute([2, 0, 3, 1, 4]); // [3, B, H, N, D/H]
        let [q, k, v] = [0, 1, 2].map(|i| {
            qkv.clone()
                .narrow(0, i, 1) // [1, B, H, N, D/H]
                .reshape([batch, self.heads, n, head_dim]) // [B, H, N, D/H]
        });
        let scale = (head_dim as f64).powf(-0.5);
        let scores = q.matmul(k.swap_dims(2, 3)) * scale; // [B, H, N, N]
        let attention = attention_softmax(scores); // [B, H, N, N]
        let used = match probe {
            Some(probe) => attention.clone() + probe, // [B, H, N, N]
            None => attention.clone(),
        };
        let mixed = dropout(&self.dropout, used).matmul(v); // [B, H, N, D/H]
        let mixed = mixed.swap_dims(1, 2).reshape([batch, n, dim]); // [B, N, D]
        (mixed, attention)
    }
}

/// Below this many scores the attention softmax is composed of element-wise operations on
/// the CPU backend (see [`attention_softmax`]): batch-1 scores are 2,312 (seed preset) or
/// 20,000 (lab preset).
const SMALL_SOFTMAX: usize = 64 * 1024;

/// Softmax over the last axis.
///
/// Flex's fused softmax always splits its rows over the thread pool; for the few thousand
/// scores of a batch-1 pass, waking a second thread costs more than the softmax itself
/// (`perf stat` of `vit bench --threads 2`: ~6 context switches per batch-1 inference, one
/// per block, found with gdb in `softmax_last`). Flex splits element-wise operations only
/// above 256 K elements, so the composed form below stays on the calling thread. The same
/// formula (shifted by the row maximum); the shift is detached, as softmax does not depend
/// on it. Large inputs, WebGPU and the single-threaded browser keep the fused kernel.
///
/// # Shapes
/// - scores: `[batch, heads, tokens, tokens]`
/// - output: the same, each row summing to 1
pub fn attention_softmax(scores: Tensor<4>) -> Tensor<4> {
    if cfg!(target_arch = "wasm32")
        || scores.shape().num_elements() >= SMALL_SOFTMAX
        || scores.device().inner() != Device::flex()
    {
        return softmax(scores, 3);
    }
    let row_max = scores.clone().detach().max_dim(3); // [B, H, N, 1]
    let exponentials = (scores - row_max).exp(); // [B, H, N, N]
    let row_sums = exponentials.clone().sum_dim(3); // [B, H, N, 1]
    exponentials / row_sums // [B, H, N, N]
}
