use burn::module::Module;
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::{Device, Tensor};

use super::{EncoderBlock, PatchEmbedding, VitConfig, fused, layer_norm};

/// The whole model: patch embedding, L encoder blocks, LayerNorm, linear head.
#[derive(Module, Debug)]
pub struct VisionTransformer {
    pub patch_embed: PatchEmbedding,
    pub layers: Vec<EncoderBlock>,
    pub norm: LayerNorm,
    pub head: Linear,
}

/// One forward pass: the logits and, per layer, the attention probabilities it used.
#[derive(Debug, Clone)]
pub struct VitOutput {
    /// `[batch, classes]`
    pub logits: Tensor<2>,
    /// One `[batch, heads, tokens, tokens]` per layer, first layer first.
    pub attention: Vec<Tensor<4>>,
}

impl VisionTransformer {
    pub(super) fn new(config: &VitConfig, device: &Device) -> Self {
        Self {
            patch_embed: PatchEmbedding::new(config, device),
            layers: (0..config.depth)
                .map(|_| EncoderBlock::new(config, device))
                .collect(),
            norm: LayerNormConfig::new(config.dim).init(device),
            head: LinearConfig::new(config.dim, config.num_classes).init(device),
        }
    }

    /// Class scores, without keeping the attention maps.
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`, normalised pixels
    /// - output: `[batch, classes]`
    pub fn forward(&self, images: Tensor<4>) -> Tensor<2> {
        self.forward_with_attention(images).logits
    }

    /// Class scores and every layer's attention probabilities, from the same pass.
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - logits: `[batch, classes]`
    /// - attention: `depth` × `[batch, heads, tokens, tokens]`
    pub fn forward_with_attention(&self, images: Tensor<4>) -> VitOutput {
        let mut tokens = self.patch_embed.forward(images); // [B, N + 1, D]
        let mut attention = Vec::with_capacity(self.layers.len());
        for layer in &self.layers {
            let (next, probabilities) = layer.forward(tokens);
            tokens = next; // [B, N + 1, D]
            attention.push(probabilities);
        }
        let [batch, _, dim] = tokens.dims();
        let class_token = tokens.narrow(1, 0, 1).reshape([batch, dim]); // [B, D]
        let normed = layer_norm(&self.norm, &class_token); // [B, D]
        let logits = fused::linear(&self.head, &normed); // [B, classes]
        VitOutput { logits, attention }
    }
}
