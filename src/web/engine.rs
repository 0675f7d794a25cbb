//! The model the page draws with: on the CPU in the page itself, or on the GPU in a worker of
//! its own (so that a GPU that fails or panics takes the worker down, never the page).

use std::rc::Rc;

use burn::tensor::Device;

use crate::analysis::inference::{self, Classification, ModelInsight};
use crate::data::IMAGE_PIXELS;
use crate::model::{Classifier, ModelConfig};
use crate::weights::{self, WeightsFile};

use super::Backend;
use super::gpu::GpuWorker;
use super::read::read_floats;

/// A model on a device in this thread: the page's CPU model, or the GPU worker's model.
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

    /// Probabilities and every attention map for `images`, from one forward pass and one
    /// readback, packed as [`inference::PendingClassification`] describes.
    pub async fn classify_packed(&self, images: &[[u8; IMAGE_PIXELS]]) -> Result<Vec<f32>, String> {
        let pending = inference::classify(&self.model, images, &self.device);
        let packed = read_floats(pending.packed, "probabilities and attention maps").await?;
        let probabilities = &packed[..(images.len() * self.config.num_classes()).min(packed.len())];
        if probabilities.iter().any(|p| !p.is_finite()) {
            return Err("the model produced NaN probabilities".into());
        }
        Ok(packed)
    }

    /// Mean attention distance per layer and head over `images` (a ViT's).
    pub async fn attention_distance(
        &self,
        images: &[[u8; IMAGE_PIXELS]],
    ) -> Result<Vec<Vec<f32>>, String> {
        let config = self.config.vit().ok_or(NO_ATTENTION)?;
        let packed = self.classify_packed(images).await?;
        Ok(inference::batch_attention_distance(
            inference::attention_part(&packed, images.len(), config),
            images.len(),
            config,
        ))
    }
}

/// Where the page's model runs.
enum Executor {
    Here(Box<LocalModel>),
    Worker(Rc<GpuWorker>),
}

/// Asked of a CNN for what only a ViT has.
const NO_ATTENTION: &str = "a CNN has no attention maps";

/// A model ready to classify drawings, wherever it runs.
pub struct Engine {
    pub backend: Backend,
    pub config: ModelConfig,
    /// What the weights alone show (Fig. 7 for a ViT; filters and receptive fields for a CNN).
    pub insight: ModelInsight,
    executor: Executor,
}

/// Principal components of the patch filters the analysis panel shows.
pub const FILTER_COMPONENTS: usize = 8;

fn insight_of(file: &WeightsFile) -> ModelInsight {
    ModelInsight::from_weights(file, FILTER_COMPONENTS)
}

impl Engine {
    /// Validates `bytes` and builds the model on `device` in this thread; an error leaves
    /// nothing half-loaded.
    pub fn load(bytes: &[u8], device: Device, backend: Backend) -> Result<Self, String> {
        let file: WeightsFile = weights::decode(bytes).map_err(|e| e.to_string())?;
        Ok(Self {
            insight: insight_of(&file),
            config: file.config.clone(),
            executor: Executor::Here(Box::new(LocalModel::new(&file, device))),
            backend,
        })
    }

    /// Validates `bytes` here, then has the GPU worker build and warm the same model.
    pub async fn load_on_gpu(bytes: &[u8], worker: Rc<GpuWorker>) -> Result<Self, String> {
        let file: WeightsFile = weights::decode(bytes).map_err(|e| e.to_string())?;
        worker.load(bytes).await?;
        Ok(Self {
            insight: insight_of(&file),
            config: file.config,
            executor: Executor::Worker(worker),
            backend: Backend::WebGpu,
        })
    }

    /// Probabilities and attention for one 28×28 image, from one forward pass.
    pub async fn classify(&self, image: &[u8; IMAGE_PIXELS]) -> Result<Classification, String> {
        let packed = match &self.executor {
            Executor::Here(model) => model.classify_packed(std::slice::from_ref(image)).await?,
            Executor::Worker(worker) => worker.classify(image).await?,
        };
        let expected = inference::packed_len(1, &self.config);
        if packed.len() != expected {
            return Err(format!(
                "the classification came back with {} values instead of {expected}",
                packed.len()
            ));
        }
        Ok(Classification::from_packed(&packed, &self.config))
    }

    /// Mean attention distance per layer and head over a batch of images (a ViT's).
    pub async fn attention_distance(
        &self,
        images: &[[u8; IMAGE_PIXELS]],
    ) -> Result<Vec<Vec<f32>>, String> {
        match &self.executor {
            Executor::Here(model) => model.attention_distance(images).await,
            Executor::Worker(worker) => worker.distances(images).await,
        }
    }
}
