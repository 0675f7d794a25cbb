//! What the page shows of one drawing, computed where the model runs: the probabilities, and
//! for a ViT the maps the lab draws (rollout, each layer's and head's class-token map, each
//! layer's head-averaged map of every patch, for hovering) and the drawing's mean attention
//! distance per head. The drawing worker sends this rather than every attention matrix: about
//! 17 thousand values for the lab model instead of 120 thousand, and the page's thread does no
//! arithmetic on them, it paints.
//!
//! # Packed layout (a ViT's; a CNN's is its probabilities alone)
//! `[classes]` probabilities, `[patches]` rollout, `[depth, heads + 1, patches]` class-token
//! maps (each head, then the heads' mean), `[depth, patches, patches]` head-averaged maps of
//! every patch, `[depth, heads]` distances in pixels.

use crate::analysis::inference::{self, Classification};
use crate::analysis::insight;
use crate::model::ModelConfig;

/// What one drawing shows, for a ViT or (maps empty) a CNN.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub probabilities: Vec<f32>,
    /// Attention rollout over all layers, one weight per patch.
    pub rollout: Vec<f32>,
    /// Per layer, the class token's attention over the patches: each head's, then the heads'
    /// mean.
    pub class_maps: Vec<Vec<Vec<f32>>>,
    /// Per layer, where each patch looks (heads averaged): `patches × patches`, row-major.
    pub patch_maps: Vec<Vec<f32>>,
    /// Per layer, each head's mean attention distance in pixels (Fig. 7, right).
    pub distances: Vec<Vec<f32>>,
}

impl Reading {
    /// From one image's classification by the model `config` describes.
    pub fn of(classification: &Classification, config: &ModelConfig) -> Self {
        let probabilities = classification.probabilities.clone();
        let Some(vit) = config.vit() else {
            return Self::probabilities_only(probabilities);
        };
        let layers = &classification.attention;
        Self {
            probabilities,
            rollout: classification.rollout(),
            class_maps: layers
                .iter()
                .map(|layer| {
                    (0..layer.heads)
                        .map(|head| layer.class_attention(head))
                        .chain(std::iter::once(layer.class_attention_mean()))
                        .collect()
                })
                .collect(),
            // The patches' rows of the heads' mean, without the class token's row or column.
            patch_maps: layers
                .iter()
                .map(|layer| {
                    let tokens = layer.tokens;
                    let mean = layer.head_mean(); // [tokens, tokens]
                    (1..tokens)
                        .flat_map(|row| mean[row * tokens + 1..(row + 1) * tokens].to_vec())
                        .collect()
                })
                .collect(),
            distances: layers
                .iter()
                .map(|layer| {
                    insight::mean_attention_distance(layer, vit.grid_size(), vit.patch_size)
                })
                .collect(),
        }
    }

    fn probabilities_only(probabilities: Vec<f32>) -> Self {
        Self {
            probabilities,
            rollout: Vec::new(),
            class_maps: Vec::new(),
            patch_maps: Vec::new(),
            distances: Vec::new(),
        }
    }

    /// Values in the packed form for the model `config` describes; saturates rather than
    /// wraps for a config too large to run.
    pub fn packed_len(config: &ModelConfig) -> usize {
        let classes = config.num_classes();
        let Some(vit) = config.vit() else {
            return classes;
        };
        let patches = vit.grid_size().saturating_mul(vit.grid_size());
        let per_layer = [
            vit.heads.saturating_add(1).saturating_mul(patches),
            patches.saturating_mul(patches),
            vit.heads,
        ]
        .iter()
        .fold(0usize, |sum, n| sum.saturating_add(*n));
        classes
            .saturating_add(patches)
            .saturating_add(vit.depth.saturating_mul(per_layer))
    }

    /// The packed form (see the module's layout).
    pub fn to_packed(&self) -> Vec<f32> {
        let mut packed = self.probabilities.clone();
        packed.extend_from_slice(&self.rollout);
        packed.extend(self.class_maps.iter().flatten().flatten());
        packed.extend(self.patch_maps.iter().flatten());
        packed.extend(self.distances.iter().flatten());
        packed
    }

    /// Reads the packed form for the model `config` describes; `None` when `packed` is not
    /// [`Reading::packed_len`] values long.
    pub fn from_packed(packed: &[f32], config: &ModelConfig) -> Option<Self> {
        if packed.len() != Self::packed_len(config) {
            return None;
        }
        let classes = config.num_classes();
        let (probabilities, rest) = packed.split_at(classes);
        let Some(vit) = config.vit() else {
            return Some(Self::probabilities_only(probabilities.to_vec()));
        };
        let (depth, heads) = (vit.depth, vit.heads);
        let patches = vit.grid_size() * vit.grid_size();
        if heads == 0 || patches == 0 {
            return None;
        }
        let (rollout, rest) = rest.split_at(patches);
        let (class_maps, rest) = rest.split_at(depth * (heads + 1) * patches);
        let (patch_maps, distances) = rest.split_at(depth * patches * patches);
        Some(Self {
            probabilities: probabilities.to_vec(),
            rollout: rollout.to_vec(),
            class_maps: class_maps
                .chunks_exact((heads + 1) * patches)
                .map(|layer| layer.chunks_exact(patches).map(<[f32]>::to_vec).collect())
                .collect(),
            patch_maps: patch_maps
                .chunks_exact(patches * patches)
                .map(<[f32]>::to_vec)
                .collect(),
            distances: distances.chunks_exact(heads).map(<[f32]>::to_vec).collect(),
        })
    }

    /// The most probable class.
    pub fn predicted(&self) -> usize {
        inference::most_probable(&self.probabilities)
    }

    /// Whether the maps are of a model with `depth` layers of `heads` heads over a `grid ×
    /// grid` patch grid (a reading by other weights may not be).
    pub fn fits(&self, grid: usize, depth: usize, heads: usize) -> bool {
        let patches = grid * grid;
        self.class_maps.len() == depth
            && self.class_maps.iter().all(|layer| {
                layer.len() == heads + 1 && layer.iter().all(|map| map.len() == patches)
            })
            && self
                .patch_maps
                .iter()
                .all(|map| map.len() == patches * patches)
            && self.rollout.len() == patches
    }
}
