use burn::tensor::Device;

use crate::data::IMAGE_PIXELS;
use crate::inference::{self, Classification, WeightInsight};
use crate::model::{VisionTransformer, VitConfig};
use crate::weights::{self, WeightsFile};

use super::Backend;
use super::read::read_floats;

/// A model on a device, ready to classify drawings.
pub struct Engine {
    pub device: Device,
    pub backend: Backend,
    pub model: VisionTransformer,
    pub config: VitConfig,
    pub insight: WeightInsight,
}

/// Principal components of the patch filters the analysis panel shows.
pub const FILTER_COMPONENTS: usize = 8;

impl Engine {
    /// Validates `bytes` and builds the model; an error leaves nothing half-loaded.
    pub fn load(bytes: &[u8], device: Device, backend: Backend) -> Result<Self, String> {
        let file: WeightsFile = weights::decode(bytes).map_err(|e| e.to_string())?;
        let model = file.into_model(&device);
        Ok(Self {
            insight: WeightInsight::from_weights(&file, FILTER_COMPONENTS),
            config: file.config,
            model,
            device,
            backend,
        })
    }

    /// Probabilities and attention for one 28×28 image, from one forward pass.
    pub async fn classify(&self, image: &[u8; IMAGE_PIXELS]) -> Result<Classification, String> {
        let pending = inference::classify(&self.model, std::slice::from_ref(image), &self.device);
        let probabilities = read_floats(pending.probabilities, "probabilities").await?;
        let attention = read_floats(pending.attention, "attention maps").await?;
        let result = Classification::from_values(probabilities, attention, &self.config);
        if result.probabilities.iter().any(|p| !p.is_finite()) {
            return Err("the model produced NaN probabilities".into());
        }
        Ok(result)
    }

    /// Mean attention distance per layer and head over a batch of images.
    pub async fn attention_distance(
        &self,
        images: &[[u8; IMAGE_PIXELS]],
    ) -> Result<Vec<Vec<f32>>, String> {
        let pending = inference::classify(&self.model, images, &self.device);
        let attention = read_floats(pending.attention, "attention maps").await?;
        Ok(inference::batch_attention_distance(
            &attention,
            images.len(),
            &self.config,
        ))
    }
}
