//! One Transformer encoder block (Eq. 2–3): LayerNorm, attention and a residual, LayerNorm, an
//! MLP with GELU and a residual.

use burn::module::Module;
use burn::nn::{Dropout, DropoutConfig, Gelu, LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::{Device, Tensor};

use super::{LayerAblation, MultiHeadAttention, VitConfig, dropout, fused};

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

    /// Each step runs as a fused kernel where one runs (a GPU; see [`fused`]) and as Burn's
    /// ops elsewhere, with the dropout of the seed's model in the same places either way.
    ///
    /// # Shapes
    /// - tokens: `[batch, tokens, dim]`
    /// - output: `[batch, tokens, dim]`
    /// - attention: `[batch, heads, tokens, tokens]`
    pub fn forward(&self, tokens: Tensor<3>) -> (Tensor<3>, Tensor<4>) {
        self.forward_probed(tokens, None)
    }

    /// [`Self::forward`] with a probe on the attention (see
    /// [`MultiHeadAttention::attend_probed`]).
    ///
    /// # Shapes
    /// - tokens: `[batch, tokens, dim]`
    /// - probe: `[batch, heads, tokens, tokens]`
    /// - output: `[batch, tokens, dim]`
    /// - attention: `[batch, heads, tokens, tokens]`
    pub fn forward_probed(
        &self,
        tokens: Tensor<3>,
        probe: Option<Tensor<4>>,
    ) -> (Tensor<3>, Tensor<4>) {
        let (tokens, attention, _) = self.forward_ablated(tokens, probe, None);
        (tokens, attention)
    }

    /// [`Self::forward_probed`] with some heads switched off (their outputs replaced, see
    /// [`LayerAblation`]); also the heads' outputs side by side as the projection read them.
    ///
    /// # Shapes
    /// - tokens: `[batch, tokens, dim]`
    /// - probe: `[batch, heads, tokens, tokens]`
    /// - output: `[batch, tokens, dim]`
    /// - attention: `[batch, heads, tokens, tokens]`
    /// - mixed: `[batch, tokens, dim]`
    pub fn forward_ablated(
        &self,
        tokens: Tensor<3>,
        probe: Option<Tensor<4>>,
        ablation: Option<&LayerAblation>,
    ) -> (Tensor<3>, Tensor<4>, Tensor<3>) {
        let normed = layer_norm(&self.norm1, &tokens); // [B, N, D]
        let (mixed, attention) = self.attn.attend_probed(normed, probe); // [B, N, D], [B, H, N, N]
        let mixed = match ablation {
            Some(ablation) => ablation.apply(mixed),
            None => mixed,
        }; // [B, N, D]
        let tokens =
            fused::linear_residual(&self.attn.proj, &mixed, &tokens).unwrap_or_else(|| {
                tokens + dropout(&self.attn.dropout, fused::linear(&self.attn.proj, &mixed))
            }); // [B, N, D]
        let normed = layer_norm(&self.norm2, &tokens); // [B, N, D]
        let hidden = fused::linear_gelu(&self.mlp_in, &normed).unwrap_or_else(|| {
            self.activation
                .forward(fused::linear(&self.mlp_in, &normed))
        }); // [B, N, MLP]
        let hidden = dropout(&self.dropout, hidden); // [B, N, MLP]
        let tokens = fused::linear_residual(&self.mlp_out, &hidden, &tokens).unwrap_or_else(|| {
            tokens + dropout(&self.dropout, fused::linear(&self.mlp_out, &hidden))
        }); // [B, N, D]
        (tokens, attention, mixed)
    }
}

/// `norm(input)`: one fused kernel on a GPU, Burn's LayerNorm elsewhere.
///
/// # Shapes
/// - input, output: `[..., dim]`
pub fn layer_norm<const D: usize>(norm: &LayerNorm, input: &Tensor<D>) -> Tensor<D> {
    fused::layer_norm(norm, input).unwrap_or_else(|| norm.forward(input.clone()))
}
