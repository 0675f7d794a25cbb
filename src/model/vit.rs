//! The Vision Transformer as a whole: patch embedding, the encoder blocks, the final LayerNorm
//! and the classification head read from the class token.

use burn::module::Module;
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::{Device, Int, Tensor, TensorData};

use super::{Ablation, EncoderBlock, PatchEmbedding, VitConfig, fused, layer_norm};

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

/// What a forward pass does besides its logits and attention.
#[derive(Default, Clone, Copy)]
struct Passes<'a> {
    /// Read the class token after each block (the logit lens).
    lens: bool,
    /// Keep each layer's heads' outputs.
    heads: bool,
    /// Keep the tokens as they enter the first block, before and after their positions.
    tokens: bool,
    ablation: Option<&'a Ablation>,
}

impl Passes<'_> {
    fn lens() -> Self {
        Self {
            lens: true,
            ..Self::default()
        }
    }
}

/// What [`VisionTransformer::forward_reading`] read.
struct Read {
    output: VitOutput,
    /// `depth` × `[batch, classes]`, where asked.
    lens: Vec<Tensor<2>>,
    /// `depth` × `[batch, tokens, dim]`, where asked.
    heads: Vec<Tensor<3>>,
    /// The projected patches, `[batch, patches, dim]`, and the tokens that enter the first
    /// block, `[batch, tokens, dim]`, where asked.
    tokens: Option<(Tensor<3>, Tensor<3>)>,
}

/// Everything one image's path through a ViT shows, from one pass: what the lab's story
/// ("how the ViT reads your digit") draws step by step.
#[derive(Debug, Clone)]
pub struct StoryPass {
    /// Each patch flattened and projected by E, `[batch, patches, dim]`.
    pub projected: Tensor<3>,
    /// The class token in front and the positions added: the first block's input,
    /// `[batch, tokens, dim]`.
    pub embedded: Tensor<3>,
    /// The logits and every layer's attention.
    pub output: VitOutput,
    /// The logit lens: `depth` × `[batch, classes]`, the last the logits themselves.
    pub lens: Vec<Tensor<2>>,
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
        self.forward_reading(images, probes, Passes::default())
            .output
    }

    /// The logit lens: what the class token would predict after each block, read with the
    /// model's own final LayerNorm and head (the last entry is the model's logits).
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - output: `depth` × `[batch, classes]`
    pub fn logit_lens(&self, images: Tensor<4>) -> Vec<Tensor<2>> {
        self.forward_reading(images, &[], Passes::lens()).lens
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
        let read = self.forward_reading(images, probes, Passes::lens());
        (read.output, read.lens)
    }

    /// The whole path of `images` through the model, with the heads `ablation` names
    /// switched off: the tokens as they are made, every layer's attention, the logit lens and
    /// the logits, from one pass.
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - see [`StoryPass`]
    pub fn forward_story(&self, images: Tensor<4>, ablation: Option<&Ablation>) -> StoryPass {
        let passes = Passes {
            lens: true,
            tokens: true,
            ablation,
            ..Passes::default()
        };
        let read = self.forward_reading(images, &[], passes);
        let (projected, embedded) = read.tokens.expect("asked for");
        StoryPass {
            projected,
            embedded,
            output: read.output,
            lens: read.lens,
        }
    }

    /// Class scores with the heads `ablation` names switched off.
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - output: `[batch, classes]`
    pub fn forward_ablated(&self, images: Tensor<4>, ablation: &Ablation) -> Tensor<2> {
        self.forward_ablated_with_attention(images, ablation).logits
    }

    /// [`Self::forward_with_attention`] with the heads `ablation` names switched off: what the
    /// lab shows of a drawing with heads switched off.
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - logits: `[batch, classes]`
    /// - attention: `depth` × `[batch, heads, tokens, tokens]`
    pub fn forward_ablated_with_attention(
        &self,
        images: Tensor<4>,
        ablation: &Ablation,
    ) -> VitOutput {
        let passes = Passes {
            ablation: Some(ablation),
            ..Passes::default()
        };
        self.forward_reading(images, &[], passes).output
    }

    /// Each layer's heads' outputs side by side, as its output projection reads them: what a
    /// head's mean output ([`super::HeadMeans`]) is taken over.
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - output: `depth` × `[batch, tokens, dim]`
    pub fn head_outputs(&self, images: Tensor<4>) -> Vec<Tensor<3>> {
        let passes = Passes {
            heads: true,
            ..Passes::default()
        };
        self.forward_reading(images, &[], passes).heads
    }

    /// The forward pass, probed and with heads switched off as `passes` says, and what else
    /// it reads on the way.
    fn forward_reading(&self, images: Tensor<4>, probes: &[Tensor<4>], passes: Passes<'_>) -> Read {
        let projected = self.patch_embed.project(images); // [B, N, D]
        let mut tokens = self.patch_embed.place(projected.clone()); // [B, N + 1, D]
        let kept_tokens = passes.tokens.then(|| (projected, tokens.clone()));
        let depth = self.layers.len();
        let mut attention = Vec::with_capacity(depth);
        let mut lens = Vec::with_capacity(if passes.lens { depth } else { 0 });
        let mut heads = Vec::with_capacity(if passes.heads { depth } else { 0 });
        for (i, layer) in self.layers.iter().enumerate() {
            let ablation = passes.ablation.and_then(|a| a.layer(i));
            let (next, probabilities, mixed) =
                layer.forward_ablated(tokens, probes.get(i).cloned(), ablation);
            tokens = next; // [B, N + 1, D]
            attention.push(probabilities);
            if passes.heads {
                heads.push(mixed); // [B, N + 1, D]
            }
            if passes.lens && i + 1 < depth {
                lens.push(self.classify(&tokens)); // [B, classes]
            }
        }
        let logits = self.classify(&tokens); // [B, classes]
        if passes.lens {
            lens.push(logits.clone()); // after the last block: the logits themselves
        }
        Read {
            output: VitOutput { logits, attention },
            lens,
            heads,
            tokens: kept_tokens,
        }
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
