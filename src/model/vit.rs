//! The Vision Transformer as a whole: patch embedding, the encoder blocks, the final LayerNorm
//! and the classification head read from the class token.

use burn::module::Module;
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::{Device, Int, Tensor, TensorData};

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
        self.forward_probed(images, &[])
    }

    /// [`Self::forward_with_attention`] with `probes[l]` added to layer `l`'s attention where
    /// the values are mixed (see [`super::MultiHeadAttention::attend_probed`]); layers past
    /// the probes run as they do without.
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - probes: up to `depth` × `[batch, heads, tokens, tokens]`
    /// - logits: `[batch, classes]`
    /// - attention: `depth` × `[batch, heads, tokens, tokens]`
    pub fn forward_probed(&self, images: Tensor<4>, probes: &[Tensor<4>]) -> VitOutput {
        self.forward_reading(images, probes, false).0
    }

    /// The logit lens: what the class token would predict after each block, read with the
    /// model's own final LayerNorm and head (the last entry is the model's logits).
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - output: `depth` × `[batch, classes]`
    pub fn logit_lens(&self, images: Tensor<4>) -> Vec<Tensor<2>> {
        self.forward_reading(images, &[], true).1
    }

    /// [`Self::forward_probed`] and the logit lens of the same pass: what an explanation
    /// needs, from one forward.
    ///
    /// # Shapes
    /// - as [`Self::forward_probed`]; lens: `depth` × `[batch, classes]`
    pub fn forward_probed_lens(
        &self,
        images: Tensor<4>,
        probes: &[Tensor<4>],
    ) -> (VitOutput, Vec<Tensor<2>>) {
        self.forward_reading(images, probes, true)
    }

    /// The forward pass, probed, reading the class token after each block where `lens`.
    fn forward_reading(
        &self,
        images: Tensor<4>,
        probes: &[Tensor<4>],
        lens: bool,
    ) -> (VitOutput, Vec<Tensor<2>>) {
        let mut tokens = self.patch_embed.forward(images); // [B, N + 1, D]
        let depth = self.layers.len();
        let mut attention = Vec::with_capacity(depth);
        let mut read = Vec::with_capacity(if lens { depth } else { 0 });
        for (i, layer) in self.layers.iter().enumerate() {
            let (next, probabilities) = layer.forward_probed(tokens, probes.get(i).cloned());
            tokens = next; // [B, N + 1, D]
            attention.push(probabilities);
            if lens && i + 1 < depth {
                read.push(self.classify(&tokens)); // [B, classes]
            }
        }
        let logits = self.classify(&tokens); // [B, classes]
        if lens {
            read.push(logits.clone()); // after the last block: the logits themselves
        }
        (VitOutput { logits, attention }, read)
    }

    /// Class scores with only the patches in `kept` as tokens: the others are dropped from
    /// the sequence after the position embedding, not blanked. A ViT reads any number of
    /// tokens; a CNN has no such choice (Naseer et al., 2021, drop patches this way too).
    /// The gather index is built here, class token first, so that it is never empty, even
    /// with every patch dropped.
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - kept: `batch` lists of patch indices (row-major, from 0), as long as each other
    ///   (the shortest sets how many are read)
    /// - output: `[batch, classes]`
    pub fn forward_kept(&self, images: Tensor<4>, kept: &[Vec<usize>]) -> Tensor<2> {
        let tokens = self.patch_embed.forward(images); // [B, N + 1, D]
        let [batch, _, dim] = tokens.dims();
        let count = kept.iter().map(Vec::len).min().unwrap_or(0);
        let index: Vec<i64> = kept
            .iter()
            .flat_map(|patches| {
                std::iter::once(0).chain(patches[..count].iter().map(|&p| p as i64 + 1))
            })
            .collect();
        let index = Tensor::<2, Int>::from_data(
            TensorData::new(index, [kept.len(), count + 1]),
            &tokens.device(),
        ); // [B, K + 1]: the class token, then the kept patches'
        let index = index.unsqueeze_dim::<3>(2).expand([batch, count + 1, dim]); // [B, K + 1, D]
        let mut tokens = tokens.gather(1, index); // [B, K + 1, D]
        for layer in &self.layers {
            tokens = layer.forward(tokens).0; // [B, K + 1, D]
        }
        self.classify(&tokens) // [B, classes]
    }

    /// The head on the class token.
    ///
    /// # Shapes
    /// - tokens: `[batch, tokens, dim]`
    /// - output: `[batch, classes]`
    fn classify(&self, tokens: &Tensor<3>) -> Tensor<2> {
        let [batch, _, dim] = tokens.dims();
        let class_token = tokens.clone().narrow(1, 0, 1).reshape([batch, dim]); // [B, D]
        let normed = layer_norm(&self.norm, &class_token); // [B, D]
        fused::linear(&self.head, &normed) // [B, classes]
    }
}
