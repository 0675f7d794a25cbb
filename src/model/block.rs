use burn::module::Module;
use burn::nn::{Dropout, DropoutConfig, Gelu, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::{Device, Tensor};

use super::{MultiHeadAttention, VitConfig, dropout};

/// Eq. 2–3: a pre-norm Transformer encoder block.
#[derive(Module, Debug)]
pub struct EncoderBlock {
    pub norm1: LayerNorm,
    pub attn: MultiHeadAttention,
    pub norm2: LayerNorm,
    /// The seed's `mlp.0`.
    pub mlp_in: Linear,
    /// The seed's `mlp.3`.
    pub mlp_out: Linear,
    pub activation: Gelu,
    pub dropout: Dropout,
}

impl EncoderBlock {
    pub fn new(config: &VitConfig, device: &Device) -> Self {
        Self {
            norm1: LayerNormConfig::new(config.dim).init(device),
            attn: MultiHeadAttention::new(config, device),
            norm2: LayerNormConfig::new(config.dim).init(device),
            mlp_in: LinearConfig::new(config.dim, config.mlp_dim).init(device),
            mlp_out: LinearConfig::new(config.mlp_dim, config.dim).init(device),
            activation: Gelu::new(),
            dropout: DropoutConfig::new(config.dropout).init(),
        }
    }

    /// # Shapes
    /// - tokens: `[batch, tokens, dim]`
    /// - output: `[batch, tokens, dim]`
    /// - attention: `[batch, heads, tokens, tokens]`
    pub fn forward(&self, tokens: Tensor<3>) -> (Tensor<3>, Tensor<4>) {
        let (attended, attention) = self.attn.forward(self.norm1.forward(tokens.clone()));
        let tokens = tokens + attended; // [B, N, D]
        let hidden = self.mlp_in.forward(self.norm2.forward(tokens.clone())); // [B, N, MLP]
        let hidden = dropout(&self.dropout, self.activation.forward(hidden)); // [B, N, MLP]
        let mlp = dropout(&self.dropout, self.mlp_out.forward(hidden)); // [B, N, D]
        (tokens + mlp, attention)
    }
}
