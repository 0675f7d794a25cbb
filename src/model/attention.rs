use burn::module::Module;
use burn::nn::{Dropout, DropoutConfig, Linear, LinearConfig};
use burn::tensor::activation::softmax;
use burn::tensor::{Device, Tensor};

use super::VitConfig;
use super::dropout;

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
        let [batch, n, dim] = tokens.dims();
        let head_dim = dim / self.heads;
        let qkv = self
            .qkv
            .forward(tokens) // [B, N, 3·D]
            .reshape([batch, n, 3, self.heads, head_dim]) // [B, N, 3, H, D/H]
            .permute([2, 0, 3, 1, 4]); // [3, B, H, N, D/H]
        let [q, k, v] = [0, 1, 2].map(|i| {
            qkv.clone()
                .narrow(0, i, 1) // [1, B, H, N, D/H]
                .reshape([batch, self.heads, n, head_dim]) // [B, H, N, D/H]
        });
        let scale = (head_dim as f64).powf(-0.5);
        let scores = q.matmul(k.swap_dims(2, 3)) * scale; // [B, H, N, N]
        let attention = softmax(scores, 3); // [B, H, N, N]
        let mixed = dropout(&self.dropout, attention.clone()).matmul(v); // [B, H, N, D/H]
        let mixed = mixed.swap_dims(1, 2).reshape([batch, n, dim]); // [B, N, D]
        let output = dropout(&self.dropout, self.proj.forward(mixed)); // [B, N, D]
        (output, attention)
    }
}
