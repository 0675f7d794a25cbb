//! One image through the model: probabilities and every attention map from a single pass,
//! turned into plain arrays for the page. Tensor reads stay with the caller (synchronous
//! natively, `into_data_async` in the browser).

use burn::tensor::activation::softmax;
use burn::tensor::{Device, Tensor};

use crate::analysis::insight::{self, LayerAttention};
use crate::data::{IMAGE_PIXELS, MnistSet, images_tensor};
use crate::model::{Ablation, Classifier, CnnConfig, FIRST_CONV_WEIGHT, ModelConfig, VitConfig};
use crate::weights::WeightsFile;

/// Everything one classification reads back, packed into one tensor so that the browser
/// fetches it from the GPU in a single readback.
///
/// # Layout
/// `[batch · classes]` probabilities, then (a ViT's) every layer's
/// `[batch, heads, tokens, tokens]` attention probabilities, first layer first.
pub struct PendingClassification {
    pub packed: Tensor<1>,
    pub batch: usize,
}

/// Runs `images` (grey levels, 784 each) through the model: a ViT gives its attention too, a
/// CNN only its probabilities. A ViT runs with the heads `ablation` names switched off; a CNN
/// has none.
pub fn classify(
    model: &Classifier,
    images: &[[u8; IMAGE_PIXELS]],
    ablation: Option<&Ablation>,
    device: &Device,
) -> PendingClassification {
    let input = images_tensor(images, device); // [B, 1, 28, 28]
    let model = match model {
        Classifier::Vit(model) => model,
        Classifier::Cnn(model) => {
            let probabilities = softmax(model.forward(input), 1); // [B, C]
            return PendingClassification {
                packed: probabilities.flatten::<1>(0, 1), // [B·C]
                batch: images.len(),
            };
        }
    };
    let output = match ablation {
        Some(ablation) => model.forward_ablated_with_attention(input, ablation),
        None => model.forward_with_attention(input),
    };
    let probabilities = softmax(output.logits, 1).flatten::<1>(0, 1); // [B·C]
    let maps = output
        .attention
        .into_iter()
        .map(|map| map.flatten::<1>(0, 3)); // L × [B·H·N·N]
    PendingClassification {
        packed: Tensor::cat(std::iter::once(probabilities).chain(maps).collect(), 0),
        batch: images.len(),
    }
}

/// Values in the packed read-back of `batch` images.
/// Saturates rather than wraps for a config too large to run.
pub fn packed_len(batch: usize, config: &ModelConfig) -> usize {
    let Some(config) = config.vit() else {
        return batch.saturating_mul(config.num_classes());
    };
    let tokens = config.num_tokens();
    let maps = [config.heads, tokens, tokens]
        .iter()
        .fold(config.depth, |n, m| n.saturating_mul(*m));
    batch.saturating_mul(config.num_classes.saturating_add(maps))
}

/// The attention part of a packed read-back (see [`PendingClassification`]), layer-major:
/// `[depth · batch, heads, tokens, tokens]`.
pub fn attention_part<'a>(packed: &'a [f32], batch: usize, config: &VitConfig) -> &'a [f32] {
    &packed[(batch * config.num_classes).min(packed.len())..]
}

/// What the page shows for one drawing.
#[derive(Debug, Clone, PartialEq)]
pub struct Classification {
    pub probabilities: Vec<f32>,
    /// One per layer (none for a CNN).
    pub attention: Vec<LayerAttention>,
}

impl Classification {
    /// Splits the packed read-back of a batch of one (see [`PendingClassification`]).
    pub fn from_packed(packed: &[f32], config: &ModelConfig) -> Self {
        let classes = config.num_classes().min(packed.len());
        let attention = match config.vit() {
            Some(config) => LayerAttention::split_batch(
                attention_part(packed, 1, config),
                config.depth,
                config.heads,
                config.num_tokens(),
            ),
            None => Vec::new(),
        };
        Self {
            probabilities: packed[..classes].to_vec(),
            attention,
        }
    }

    pub fn predicted(&self) -> usize {
        most_probable(&self.probabilities)
    }

    /// Attention rollout over all layers, one weight per patch.
    pub fn rollout(&self) -> Vec<f32> {
        insight::rollout(&self.attention)
    }
}

/// The class with the highest probability (the first of equals; 0 for none).
pub fn most_probable(probabilities: &[f32]) -> usize {
    probabilities
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(digit, _)| digit)
        .unwrap_or(0)
}

/// Mean attention distance per layer and head, averaged over a batch whose attention was
/// read back as `[depth · batch, heads, tokens, tokens]`.
pub fn batch_attention_distance(values: &[f32], batch: usize, config: &VitConfig) -> Vec<Vec<f32>> {
    let all = LayerAttention::split_batch(
        values,
        config.depth * batch,
        config.heads,
        config.num_tokens(),
    );
    all.chunks(batch)
        .map(|layer_images| {
            let mut mean = vec![0.0; config.heads];
            for image in layer_images {
                let distances =
                    insight::mean_attention_distance(image, config.grid_size(), config.patch_size);
                for (m, d) in mean.iter_mut().zip(distances) {
                    *m += d / batch as f32;
                }
            }
            mean
        })
        .collect()
}

/// The parts of the paper's Fig. 7 that depend on the weights alone.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WeightInsight {
    /// `patches × patches` cosine similarities of the position embeddings.
    pub position_similarity: Vec<f32>,
    /// Principal components of the patch-embedding filters, with their variance shares.
    pub filter_components: Vec<(Vec<f32>, f32)>,
}

impl WeightInsight {
    /// From a ViT's weights file (`config` is its ViT config).
    pub fn from_weights(file: &WeightsFile, config: &VitConfig, components: usize) -> Self {
        let tensor = |name: &str| {
            &file
                .tensors
                .iter()
                .find(|t| t.name == name)
                .expect("a decoded file has every tensor")
                .values
        };
        Self {
            position_similarity: insight::position_similarity(
                tensor("patch_embed.pos_embedding"),
                config.num_tokens(),
                config.dim,
            ),
            filter_components: insight::filter_components(
                tensor("patch_embed.proj.weight"),
                config.dim,
                config.patch_dim(),
                components,
            ),
        }
    }
}

/// What the page shows of a CNN's weights: its first convolution's filters, and the receptive
/// field of each convolution (the counterpart of a ViT layer's attention distance).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CnnInsight {
    /// Each first-layer filter, `kernel × kernel`, summed over the input channels.
    pub filters: Vec<Vec<f32>>,
    pub kernel_size: usize,
    /// Pixels each convolution sees, first layer first.
    pub receptive_fields: Vec<usize>,
}

impl CnnInsight {
    /// From a CNN's weights file (`config` is its CNN config).
    pub fn from_weights(file: &WeightsFile, config: &CnnConfig) -> Self {
        let area = config.kernel_size * config.kernel_size;
        let first = file
            .tensors
            .iter()
            .find(|t| t.name == FIRST_CONV_WEIGHT)
            .expect("a decoded CNN file has its first convolution");
        // PyTorch's layout: [out, in, k, k].
        let per_filter = config.channels * area;
        let filters = first
            .values
            .chunks(per_filter)
            .map(|filter| {
                (0..area)
                    .map(|i| filter.iter().skip(i).step_by(area).sum())
                    .collect()
            })
            .collect();
        Self {
            filters,
            kernel_size: config.kernel_size,
            receptive_fields: config.receptive_fields(),
        }
    }
}

/// What the page shows of a model's weights alone, whichever it is; a ViT's with its config
/// (the grid and depth its views are drawn for). A drawing worker reads it from the weights and
/// sends it to the page.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ModelInsight {
    Vit(VitConfig, WeightInsight),
    Cnn(CnnInsight),
}

impl ModelInsight {
    pub fn from_weights(file: &WeightsFile, filter_components: usize) -> Self {
        match &file.config {
            ModelConfig::Vit(config) => Self::Vit(
                config.clone(),
                WeightInsight::from_weights(file, config, filter_components),
            ),
            ModelConfig::Cnn { cnn } => Self::Cnn(CnnInsight::from_weights(file, cnn)),
        }
    }
}

/// The first `count` images of a set, as classify takes them.
pub fn images_of(set: &MnistSet, count: usize) -> Vec<[u8; IMAGE_PIXELS]> {
    (0..count.min(set.len()))
        .map(|i| set.image(i).try_into().expect("784 pixels"))
        .collect()
}
