//! A model on a device in the thread that holds it: a drawing worker's, on the CPU or on
//! WebGPU (`drawing/worker.rs` runs it for both).

use burn::tensor::Device;

use crate::analysis::inference;
use burn::tensor::activation::softmax;

use crate::data::{IMAGE_PIXELS, images_tensor};
use crate::model::{Ablation, Classifier, ModelConfig};
use crate::weights::WeightsFile;

use super::read::{ReadError, read_floats_async};

/// Images per pass when only probabilities are read.
const PROBABILITIES_BATCH: usize = 250;

/// Why the model gave nothing to show.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("the model produced NaN probabilities")]
    NotFinite,
    /// Asked of a CNN for what only a ViT has.
    #[error("a CNN has no attention maps")]
    NoAttention,
}

/// A model on a device in this thread: a drawing worker's, on the CPU or on WebGPU.
pub struct LocalModel {
    pub device: Device,
    pub model: Classifier,
    pub config: ModelConfig,
}

impl LocalModel {
    pub fn new(file: &WeightsFile, device: Device) -> Self {
        Self {
            model: file.into_model(&device),
            config: file.config.clone(),
            device,
        }
    }

    /// Probabilities and every attention map for `images`, from one forward pass (with the
    /// heads `ablation` names switched off) and one readback, packed as
    /// [`inference::PendingClassification`] describes.
    pub async fn classify_packed(
        &self,
        images: &[[u8; IMAGE_PIXELS]],
        ablation: Option<&Ablation>,
    ) -> Result<Vec<f32>, ModelError> {
        let pending = inference::classify(&self.model, images, ablation, &self.device);
        let packed = read_floats_async(pending.packed, "probabilities and attention maps").await?;
        let probabilities = &packed[..(images.len() * self.config.num_classes()).min(packed.len())];
        if probabilities.iter().any(|p| !p.is_finite()) {
            return Err(ModelError::NotFinite);
        }
        Ok(packed)
    }

    /// Class probabilities for `images`, `classes` per image, every head on, a few hundred
    /// images a pass (no attention maps are kept).
    pub async fn probabilities(
        &self,
        images: &[[u8; IMAGE_PIXELS]],
    ) -> Result<Vec<f32>, ModelError> {
        let mut all = Vec::with_capacity(images.len() * self.config.num_classes());
        for batch in images.chunks(PROBABILITIES_BATCH) {
            let logits = self.model.forward(images_tensor(batch, &self.device)); // [B, C]
            let flat = softmax(logits, 1).flatten::<1>(0, 1); // [B·C]
            let read = read_floats_async(flat, "probabilities").await?;
            if read.iter().any(|p| !p.is_finite()) {
                return Err(ModelError::NotFinite);
            }
            all.extend(read);
        }
        Ok(all)
    }

    /// Mean attention distance per layer and head over `images` (a ViT's).
    pub async fn attention_distance(
        &self,
        images: &[[u8; IMAGE_PIXELS]],
    ) -> Result<Vec<Vec<f32>>, ModelError> {
        let config = self.config.vit().ok_or(ModelError::NoAttention)?;
        let packed = self.classify_packed(images, None).await?;
        Ok(inference::batch_attention_distance(
            inference::attention_part(&packed, images.len(), config),
            images.len(),
            config,
        ))
    }
}
