//! Which heads matter: the test accuracy a ViT loses when one head at a time is switched off
//! (`model::Ablation`), for every layer and head, and the heads' mean outputs a switched-off
//! head is replaced with. The page's explaining worker and `vit ablate` measure it alike.

use burn::tensor::{Device, Tensor};
use serde::{Deserialize, Serialize};

use crate::data::{IMAGE_PIXELS, images_tensor};
use crate::model::{Ablation, AblationError, HeadMeans, Replacement, VisionTransformer, VitConfig};
use crate::train::predictions;
use crate::weights::{ReadbackError, read_all_async};

/// Images per forward pass.
const BATCH: usize = 250;

/// Test digits a head's mean output is taken over in the page: the first test chunk, which
/// both of the page's workers hold (`vit ablate --mean-images 2500` takes the same).
pub const PAGE_MEAN_IMAGES: usize = 2_500;

/// Test digits the page's "which heads matter" table measures on by default.
pub const PAGE_IMPORTANCE_IMAGES: usize = 200;

/// The accuracy lost on some test images when each head alone is switched off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadImportance {
    pub images: usize,
    pub replacement: Replacement,
    /// The accuracy with every head on.
    pub baseline: f32,
    /// `[layer][head]`: the accuracy with that head switched off.
    pub accuracy: Vec<Vec<f32>>,
}

impl HeadImportance {
    /// `[layer][head]`: the accuracy lost (positive: the head helped).
    pub fn lost(&self) -> Vec<Vec<f32>> {
        self.accuracy
            .iter()
            .map(|heads| heads.iter().map(|a| self.baseline - a).collect())
            .collect()
    }

    /// One row per head, counted from 1: `layer,head,accuracy,lost`.
    pub fn csv(&self) -> String {
        let mut csv = String::from("layer,head,accuracy,lost\n");
        for (l, heads) in self.accuracy.iter().enumerate() {
            for (h, accuracy) in heads.iter().enumerate() {
                let lost = self.baseline - accuracy;
                csv.push_str(&format!("{},{},{accuracy},{lost}\n", l + 1, h + 1));
            }
        }
        csv
    }
}

/// Why heads could not be measured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AblationMeasureError {
    #[error(transparent)]
    Ablation(#[from] AblationError),
    #[error(transparent)]
    Readback(#[from] ReadbackError),
    #[error("no images to measure on")]
    NoImages,
}

/// Each layer's heads' outputs averaged over `images`, position by position.
pub async fn head_means_async(
    model: &VisionTransformer,
    config: &VitConfig,
    images: &[[u8; IMAGE_PIXELS]],
    device: &Device,
) -> Result<HeadMeans, AblationMeasureError> {
    if images.is_empty() {
        return Err(AblationMeasureError::NoImages);
    }
    let tokens = config.grid_size() * config.grid_size() + 1;
    let mut sums = vec![vec![0f64; tokens * config.dim]; config.depth];
    for batch in images.chunks(BATCH) {
        let per_layer: Vec<Tensor<1>> = model
            .head_outputs(images_tensor(batch, device)) // depth × [B, N, D]
            .into_iter()
            .map(|mixed| mixed.sum_dim(0).flatten::<1>(0, 2)) // [N·D]
            .collect();
        for (sum, read) in sums.iter_mut().zip(read_all_async(per_layer).await?) {
            for (total, value) in sum.iter_mut().zip(read) {
                *total += f64::from(value);
            }
        }
    }
    let count = images.len() as f64;
    Ok(HeadMeans {
        images: images.len(),
        tokens,
        dim: config.dim,
        layers: sums
            .into_iter()
            .map(|sum| sum.into_iter().map(|v| (v / count) as f32).collect())
            .collect(),
    })
}

/// The accuracy on `images` and their `labels`, with every head on and with each head alone
/// switched off by `replacement` (`means`: the model's [`HeadMeans`], for
/// [`Replacement::Mean`]).
pub async fn head_importance_async(
    model: &VisionTransformer,
    config: &VitConfig,
    (images, labels): (&[[u8; IMAGE_PIXELS]], &[u8]),
    replacement: Replacement,
    means: Option<&HeadMeans>,
    device: &Device,
) -> Result<HeadImportance, AblationMeasureError> {
    if images.is_empty() {
        return Err(AblationMeasureError::NoImages);
    }
    let baseline = accuracy(model, &Ablation::default(), images, labels, device).await?;
    let mut table = Vec::with_capacity(config.depth);
    for layer in 0..config.depth {
        let mut row = Vec::with_capacity(config.heads);
        for head in 0..config.heads {
            let ablation = Ablation::new(config, &[(layer, head)], replacement, means, device)?;
            row.push(accuracy(model, &ablation, images, labels, device).await?);
        }
        table.push(row);
    }
    Ok(HeadImportance {
        images: images.len(),
        replacement,
        baseline,
        accuracy: table,
    })
}

/// The share of `images` the model with `ablation` classifies as `labels` says.
async fn accuracy(
    model: &VisionTransformer,
    ablation: &Ablation,
    images: &[[u8; IMAGE_PIXELS]],
    labels: &[u8],
    device: &Device,
) -> Result<f32, ReadbackError> {
    let mut correct = 0usize;
    for (batch, labels) in images.chunks(BATCH).zip(labels.chunks(BATCH)) {
        let logits = model.forward_ablated(images_tensor(batch, device), ablation); // [B, C]
        let [predicted] =
            <[Vec<f32>; 1]>::try_from(read_all_async(vec![predictions(logits).float()]).await?)
                .map_err(|_| ReadbackError("no predictions came back".into()))?;
        correct += predicted
            .iter()
            .zip(labels)
            .filter(|(p, l)| **p as usize == usize::from(**l))
            .count();
    }
    Ok(correct as f32 / images.len().max(1) as f32)
}
