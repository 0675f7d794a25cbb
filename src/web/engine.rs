//! The model the page draws with: on the CPU in the page itself, or on the GPU in a worker of
//! its own (so that a GPU that fails or panics takes the worker down, never the page).

use std::rc::Rc;

use burn::tensor::Device;

use crate::analysis::inference::{self, Classification, WeightInsight};
use crate::data::IMAGE_PIXELS;
use crate::model::{VisionTransformer, VitConfig};
use crate::weights::{self, WeightsFile};

use super::Backend;
use super::gpu::GpuWorker;
use super::read::read_floats;

/// A model on a device in this thread: the page's CPU model, or the GPU worker's model.
pub struct LocalModel {
    pub device: Device,
    pub model: VisionTransformer,
    pub config: VitConfig,
}

/// The ViT config of a file the page is to draw with: the page's views are of a ViT's
/// attention, so a CNN's file is refused with a message rather than half shown.
pub fn vit_config(file: &WeightsFile) -> Result<VitConfig, String> {
    file.config.vit().cloned().ok_or_else(|| {
        format!(
            "this file holds a {}; the page draws with ViTs only (score it with `vit eval`)",
            file.config.architecture().name()
        )
    })
}

impl LocalModel {
    pub fn new(file: &WeightsFile, device: Device) -> Result<Self, String> {
        let config = vit_config(file)?;
        let model = file
            .into_model(&device)
            .into_vit()
            .expect("a ViT's config builds a ViT");
        Ok(Self {
            model,
            config,
            device,
        })
    }

    /// Probabilities and every attention map for `images`, from one forward pass and one
    /// readback, packed as [`inference::PendingClassification`] describes.
    pub async fn classify_packed(&self, images: &[[u8; IMAGE_PIXELS]]) -> Result<Vec<f32>, String> {
        let pending = inference::classify(&self.model, images, &self.device);
        let packed = read_floats(pending.packed, "probabilities and attention maps").await?;
        let probabilities = &packed[..(images.len() * self.config.num_classes).min(packed.len())];
        if probabilities.iter().any(|p| !p.is_finite()) {
            return Err("the model produced NaN probabilities".into());
        }
        Ok(packed)
    }

    /// Mean attention distance per layer and head over `images`.
    pub async fn attention_distance(
        &self,
        images: &[[u8; IMAGE_PIXELS]],
    ) -> Result<Vec<Vec<f32>>, String> {
        let packed = self.classify_packed(images).await?;
        Ok(inference::batch_attention_distance(
            inference::attention_part(&packed, images.len(), &self.config),
            images.len(),
            &self.config,
        ))
    }
}

/// Where the page's model runs.
enum Executor {
    Here(Box<LocalModel>),
    Worker(Rc<GpuWorker>),
}

/// A model ready to classify drawings, wherever it runs.
pub struct Engine {
    pub backend: Backend,
    pub config: VitConfig,
    pub insight: WeightInsight,
    executor: Executor,
}

/// Principal components of the patch filters the analysis panel shows.
pub const FILTER_COMPONENTS: usize = 8;

impl Engine {
    /// Validates `bytes` and builds the model on `device` in this thread; an error leaves
    /// nothing half-loaded.
    pub fn load(bytes: &[u8], device: Device, backend: Backend) -> Result<Self, String> {
        let file: WeightsFile = weights::decode(bytes).map_err(|e| e.to_string())?;
        let model = LocalModel::new(&file, device)?;
        Ok(Self {
            insight: WeightInsight::from_weights(&file, &model.config, FILTER_COMPONENTS),
            config: model.config.clone(),
            executor: Executor::Here(Box::new(model)),
            backend,
        })
    }

    /// Validates `bytes` here, then has the GPU worker build and warm the same model.
    pub async fn load_on_gpu(bytes: &[u8], worker: Rc<GpuWorker>) -> Result<Self, String> {
        let file: WeightsFile = weights::decode(bytes).map_err(|e| e.to_string())?;
        let config = vit_config(&file)?;
        worker.load(bytes).await?;
        Ok(Self {
            insight: WeightInsight::from_weights(&file, &config, FILTER_COMPONENTS),
            config,
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

    /// Mean attention distance per layer and head over a batch of images.
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
