//! The model the page draws with: on the CPU in the page itself, or on the GPU in a worker of
//! its own (so that a GPU that fails or panics takes the worker down, never the page).

use std::rc::Rc;

use burn::tensor::Device;

use crate::analysis::inference::{self, Classification, ModelInsight};
use crate::data::IMAGE_PIXELS;
use crate::model::ModelConfig;
use crate::weights::{self, WeightsError, WeightsFile};

use super::BackendKind;
use super::gpu::{GpuError, GpuWorker};
use super::local_model::{LocalModel, ModelError};

/// Why the engine could not load a model, or the model could not answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    /// Weights that are not a model this page takes.
    #[error(transparent)]
    Weights(#[from] WeightsError),
    /// The model in this thread.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The model in the GPU worker.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    #[error("the classification came back with {found} values instead of {expected}")]
    WrongLength { found: usize, expected: usize },
}

/// Where the page's model runs.
enum Executor {
    Here(Box<LocalModel>),
    Worker(Rc<GpuWorker>),
}

/// A model ready to classify drawings, wherever it runs.
pub struct Engine {
    pub backend: BackendKind,
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
    pub fn load(bytes: &[u8], device: Device, backend: BackendKind) -> Result<Self, EngineError> {
        let file: WeightsFile = weights::decode(bytes)?;
        Ok(Self {
            insight: insight_of(&file),
            config: file.config.clone(),
            executor: Executor::Here(Box::new(LocalModel::new(&file, device))),
            backend,
        })
    }

    /// Validates `bytes` here, then has the GPU worker build and warm the same model.
    pub async fn load_on_gpu(bytes: &[u8], worker: Rc<GpuWorker>) -> Result<Self, EngineError> {
        let file: WeightsFile = weights::decode(bytes)?;
        worker.load(bytes).await?;
        Ok(Self {
            insight: insight_of(&file),
            config: file.config,
            executor: Executor::Worker(worker),
            backend: BackendKind::WebGpu,
        })
    }

    /// Probabilities and attention for one 28×28 image, from one forward pass.
    pub async fn classify(
        &self,
        image: &[u8; IMAGE_PIXELS],
    ) -> Result<Classification, EngineError> {
        let packed = match &self.executor {
            Executor::Here(model) => model.classify_packed(std::slice::from_ref(image)).await?,
            Executor::Worker(worker) => worker.classify(image).await?,
        };
        let expected = inference::packed_len(1, &self.config);
        if packed.len() != expected {
            return Err(EngineError::WrongLength {
                found: packed.len(),
                expected,
            });
        }
        Ok(Classification::from_packed(&packed, &self.config))
    }

    /// Mean attention distance per layer and head over a batch of images (a ViT's).
    pub async fn attention_distance(
        &self,
        images: &[[u8; IMAGE_PIXELS]],
    ) -> Result<Vec<Vec<f32>>, EngineError> {
        Ok(match &self.executor {
            Executor::Here(model) => model.attention_distance(images).await?,
            Executor::Worker(worker) => worker.distances(images).await?,
        })
    }
}
