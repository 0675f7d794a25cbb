//! "How the ViT reads your digit": one image's path through a ViT (the paper's Eq. 1–4), as
//! the lab's story draws it step by step, from the model's own values: each patch projected
//! into a token, the class token in front and the positions added, the attention rollout
//! building up layer by layer, and the logit lens (what the class token would answer after
//! each block). The attention maps of each head, the patches' maps and the probabilities are
//! the drawing's [`super::reading::Reading`]; what the weights alone show (the filters, the
//! positions' similarity) is its [`super::inference::WeightInsight`].
//!
//! The same code serves the page's drawing worker and `vit classify --story`, so the story's
//! numbers can be held to the native ones.
//!
//! # Read-back layout (one tensor, one readback)
//! `[patches, dim]` projected patches, `[tokens, dim]` embedded tokens, `[depth, classes]`
//! lens logits, then every layer's `[heads, tokens, tokens]` attention, first layer first.
//!
//! # Packed layout (worker to page)
//! `[patches, dim]` projected, `[tokens, dim]` embedded, `[depth, patches]` rollout through
//! each layer, `[depth, classes]` lens probabilities, `[classes]` logits.

use burn::tensor::{Device, Tensor};

use super::explanation::probabilities;
use super::insight::{self, LayerAttention};
use crate::data::{IMAGE_PIXELS, images_tensor};
use crate::model::{Ablation, VisionTransformer, VitConfig};

/// One image's path through a ViT.
#[derive(Debug, Clone, PartialEq)]
pub struct Story {
    /// Each patch flattened and projected by E (`E·x_p + b`): `[patches, dim]`, row-major.
    pub projected: Vec<f32>,
    /// What enters the first block: the class token, then the projected patches, each with its
    /// position embedding added: `[tokens, dim]`.
    pub embedded: Vec<f32>,
    /// Attention rollout through layers 1..=l, for each l: one weight per patch.
    pub rollout_by_layer: Vec<Vec<f32>>,
    /// The logit lens: after each block, the probabilities the class token would give (the
    /// last is the prediction).
    pub lens: Vec<Vec<f32>>,
    /// The head's scores, before the softmax.
    pub logits: Vec<f32>,
}

/// The story's values on the model's device, to be read back at once.
pub struct PendingStory {
    /// See the module's read-back layout.
    pub read: Tensor<1>,
}

/// Starts `image`'s story through `model`, with the heads `ablation` names switched off.
pub fn story(
    model: &VisionTransformer,
    image: &[u8; IMAGE_PIXELS],
    ablation: Option<&Ablation>,
    device: &Device,
) -> PendingStory {
    let input = images_tensor(&[image], device); // [1, 1, 28, 28]
    let pass = model.forward_story(input, ablation);
    let lens = pass.lens.into_iter().map(|l| l.flatten::<1>(0, 1)); // depth × [C]
    let maps = pass
        .output
        .attention
        .into_iter()
        .map(|map| map.flatten::<1>(0, 3)); // depth × [H·T·T]
    let parts = [
        pass.projected.flatten::<1>(0, 2), // [N·D]
        pass.embedded.flatten::<1>(0, 2),  // [T·D]
    ]
    .into_iter()
    .chain(lens)
    .chain(maps)
    .collect();
    PendingStory {
        read: Tensor::cat(parts, 0),
    }
}

/// Values in the read-back of a model `config` describes; saturates rather than wraps for a
/// config too large to run.
pub fn read_len(config: &VitConfig) -> usize {
    let (patches, tokens) = (patches(config), config.num_tokens());
    let maps = config
        .heads
        .saturating_mul(tokens)
        .saturating_mul(tokens)
        .saturating_add(config.num_classes)
        .saturating_mul(config.depth);
    patches
        .saturating_add(tokens)
        .saturating_mul(config.dim)
        .saturating_add(maps)
}

fn patches(config: &VitConfig) -> usize {
    config.grid_size().saturating_mul(config.grid_size())
}

impl Story {
    /// From the read-back of [`story`] (see the module's layout); `None` when it is not
    /// [`read_len`] values long.
    pub fn of_read(read: &[f32], config: &VitConfig) -> Option<Self> {
        if read.len() != read_len(config) || config.depth == 0 {
            return None;
        }
        let (patches, tokens, dim) = (patches(config), config.num_tokens(), config.dim);
        let (projected, rest) = read.split_at(patches * dim);
        let (embedded, rest) = rest.split_at(tokens * dim);
        let (lens, maps) = rest.split_at(config.depth * config.num_classes);
        let layers = LayerAttention::split_batch(maps, config.depth, config.heads, tokens);
        let logits = lens[lens.len() - config.num_classes..].to_vec();
        Some(Self {
            projected: projected.to_vec(),
            embedded: embedded.to_vec(),
            rollout_by_layer: (1..=layers.len())
                .map(|through| insight::rollout(&layers[..through]))
                .collect(),
            lens: lens
                .chunks_exact(config.num_classes)
                .map(probabilities)
                .collect(),
            logits,
        })
    }

    /// Values in the packed form for a model `config` describes; saturates rather than wraps.
    pub fn packed_len(config: &VitConfig) -> usize {
        let (patches, tokens) = (patches(config), config.num_tokens());
        let per_layer = patches.saturating_add(config.num_classes);
        patches
            .saturating_add(tokens)
            .saturating_mul(config.dim)
            .saturating_add(config.depth.saturating_mul(per_layer))
            .saturating_add(config.num_classes)
    }

    /// The packed form (see the module's layout).
    pub fn to_packed(&self) -> Vec<f32> {
        let mut packed = self.projected.clone();
        packed.extend_from_slice(&self.embedded);
        packed.extend(self.rollout_by_layer.iter().flatten());
        packed.extend(self.lens.iter().flatten());
        packed.extend_from_slice(&self.logits);
        packed
    }

    /// Reads the packed form for a model `config` describes; `None` when `packed` is not
    /// [`Story::packed_len`] values long.
    pub fn from_packed(packed: &[f32], config: &VitConfig) -> Option<Self> {
        if packed.len() != Self::packed_len(config) || config.num_classes == 0 {
            return None;
        }
        let (patches, tokens, dim) = (patches(config), config.num_tokens(), config.dim);
        let (projected, rest) = packed.split_at(patches * dim);
        let (embedded, rest) = rest.split_at(tokens * dim);
        let (rollout, rest) = rest.split_at(config.depth * patches);
        let (lens, logits) = rest.split_at(config.depth * config.num_classes);
        Some(Self {
            projected: projected.to_vec(),
            embedded: embedded.to_vec(),
            rollout_by_layer: rollout
                .chunks_exact(patches.max(1))
                .map(<[f32]>::to_vec)
                .collect(),
            lens: lens
                .chunks_exact(config.num_classes)
                .map(<[f32]>::to_vec)
                .collect(),
            logits: logits.to_vec(),
        })
    }

    /// Width of a token.
    fn dim(&self) -> usize {
        // The class token's row is the one more.
        self.embedded
            .len()
            .saturating_sub(self.projected.len())
            .max(1)
    }

    /// Patch `patch`'s token as E made it (row-major patches, from 0); empty past the last.
    pub fn token(&self, patch: usize) -> &[f32] {
        let dim = self.dim();
        self.projected
            .get(patch * dim..(patch + 1) * dim)
            .unwrap_or(&[])
    }

    /// Token `token` as it enters the first block (0 is the class token, `p + 1` patch `p`).
    pub fn entering(&self, token: usize) -> &[f32] {
        let dim = self.dim();
        self.embedded
            .get(token * dim..(token + 1) * dim)
            .unwrap_or(&[])
    }

    /// The block after which the lens first reads the final prediction and keeps reading it
    /// (counted from 1), if it ever does before the last.
    pub fn settled_at(&self) -> Option<usize> {
        let last = self.lens.last()?;
        let answer = super::inference::most_probable(last);
        let tops: Vec<usize> = self
            .lens
            .iter()
            .map(|p| super::inference::most_probable(p))
            .collect();
        let from = tops
            .iter()
            .rposition(|&top| top != answer)
            .map_or(0, |i| i + 1);
        // Settled only at the last block is not settled before it.
        (from + 1 < tops.len()).then_some(from + 1)
    }
}

/// The 28×28 input's patch `patch` (row-major, from 0) as grey levels, `patch_size²` of them.
pub fn patch_pixels(image: &[u8], patch: usize, patch_size: usize) -> Vec<u8> {
    let side = crate::data::IMAGE_SIDE;
    let grid = side / patch_size.max(1);
    let (row, column) = (patch / grid.max(1), patch % grid.max(1));
    (0..patch_size)
        .flat_map(|y| {
            let start = (row * patch_size + y) * side + column * patch_size;
            image.get(start..start + patch_size).unwrap_or(&[]).to_vec()
        })
        .collect()
}

/// The patch the rollout weighs most (the first of equals; 0 for none): where the story
/// points first.
pub fn most_attended(rollout: &[f32]) -> usize {
    rollout
        .iter()
        .enumerate()
        .fold(None::<(usize, f32)>, |best, (i, &w)| match best {
            Some((_, top)) if w.partial_cmp(&top) != Some(std::cmp::Ordering::Greater) => best,
            _ => Some((i, w)),
        })
        .map_or(0, |(i, _)| i)
}
