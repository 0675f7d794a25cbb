//! A model on a device in the thread that holds it: a drawing worker's, on the CPU or on
//! WebGPU (`drawing/worker.rs` runs it for both).

use burn::tensor::Device;

use crate::analysis::inference;
use crate::data::IMAGE_PIXELS;
use crate::model::{Ablation, Classifier, ModelConfig};
use crate::weights::WeightsFile;

use super::read::{ReadError, read_floats_async};

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
