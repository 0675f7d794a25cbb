//! The two architectures one training session, one weights format and one evaluation handle:
//! the ViT and the CNN it is argued against.

use burn::module::Module;
use burn::tensor::{Device, Tensor};
use serde::{Deserialize, Serialize};

use super::{
    Budget, CnnConfig, ConfigError, ConvNet, CostError, ModelCost, Preset, VisionTransformer,
    VitConfig,
};

/// Which architecture, with its shape.
///
/// A ViT's config is written as it always was (so older files, checkpoints and saved runs
/// read as before); a CNN's is `{"cnn": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ModelConfig {
    /// Tried first: a ViT's config has no `cnn` key.
    Cnn {
        cnn: CnnConfig,
    },
    Vit(VitConfig),
}

/// The architecture of a [`ModelConfig`], as the CLI and the page name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Architecture {
    Vit,
    Cnn,
}

impl Architecture {
    pub fn name(self) -> &'static str {
        match self {
            Self::Vit => "ViT",
            Self::Cnn => "CNN",
        }
    }
}

impl From<VitConfig> for ModelConfig {
    fn from(config: VitConfig) -> Self {
        Self::Vit(config)
    }
}

impl From<CnnConfig> for ModelConfig {
    fn from(cnn: CnnConfig) -> Self {
        Self::Cnn { cnn }
    }
}

impl ModelConfig {
    /// A preset's model.
    pub fn preset(preset: Preset) -> Self {
        match preset {
            Preset::Seed => VitConfig::seed().into(),
            Preset::Lab => VitConfig::lab().into(),
            Preset::Cnn => CnnConfig::seed().into(),
        }
    }

    pub fn architecture(&self) -> Architecture {
        match self {
            Self::Vit(_) => Architecture::Vit,
            Self::Cnn { .. } => Architecture::Cnn,
        }
    }

    /// The ViT's config, for what only a ViT has (attention maps, patches).
    pub fn vit(&self) -> Option<&VitConfig> {
        match self {
            Self::Vit(config) => Some(config),
            Self::Cnn { .. } => None,
        }
    }

    pub fn vit_mut(&mut self) -> Option<&mut VitConfig> {
        match self {
            Self::Vit(config) => Some(config),
            Self::Cnn { .. } => None,
        }
    }

    pub fn cnn_mut(&mut self) -> Option<&mut CnnConfig> {
        match self {
            Self::Cnn { cnn } => Some(cnn),
            Self::Vit(_) => None,
        }
    }

    pub fn cnn(&self) -> Option<&CnnConfig> {
        match self {
            Self::Cnn { cnn } => Some(cnn),
            Self::Vit(_) => None,
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            Self::Vit(config) => config.validate(),
            Self::Cnn { cnn } => cnn.validate(),
        }
    }

    pub fn cost(&self) -> Result<ModelCost, CostError> {
        match self {
            Self::Vit(config) => config.cost(),
            Self::Cnn { cnn } => cnn.cost(),
        }
    }

    /// Refuses a model that `budget` cannot afford (see [`ModelCost::check`]).
    pub fn check_budget(
        &self,
        budget: &Budget,
        batch: Option<usize>,
    ) -> Result<ModelCost, CostError> {
        self.cost()?.check(budget, batch)
    }

    /// Parameters, counted without building the model; `usize::MAX` for one too big to count.
    pub fn num_params(&self) -> usize {
        ModelCost::params_or_max(self.cost())
    }

    pub fn num_classes(&self) -> usize {
        match self {
            Self::Vit(config) => config.num_classes,
            Self::Cnn { cnn } => cnn.num_classes,
        }
    }

    /// Height and width of the (square) input image, and its channels.
    pub fn input(&self) -> (usize, usize) {
        match self {
            Self::Vit(config) => (config.image_size, config.channels),
            Self::Cnn { cnn } => (cnn.image_size, cnn.channels),
        }
    }

    pub fn dropout(&self) -> f64 {
        match self {
            Self::Vit(config) => config.dropout,
            Self::Cnn { cnn } => cnn.dropout,
        }
    }

    pub fn set_dropout(&mut self, dropout: f64) {
        match self {
            Self::Vit(config) => config.dropout = dropout,
            Self::Cnn { cnn } => cnn.dropout = dropout,
        }
    }

    /// Builds a randomly initialised model.
    ///
    /// # Panics
    /// If [`ModelConfig::validate`] fails.
    pub fn init(&self, device: &Device) -> Classifier {
        match self {
            Self::Vit(config) => Classifier::Vit(config.init(device)),
            Self::Cnn { cnn } => Classifier::Cnn(cnn.init(device)),
        }
    }
}

/// A model of either architecture.
#[derive(Module, Debug)]
#[allow(
    clippy::large_enum_variant,
    reason = "both are hundreds of bytes of tensor handles, and a model is moved once a step"
)]
pub enum Classifier {
    Vit(VisionTransformer),
    Cnn(ConvNet),
}

impl Classifier {
    /// Class scores.
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`, normalised pixels
    /// - output: `[batch, classes]`
    pub fn forward(&self, images: Tensor<4>) -> Tensor<2> {
        match self {
            Self::Vit(model) => model.forward(images),
            Self::Cnn(model) => model.forward(images),
        }
    }

    /// The ViT, for what only a ViT has (attention maps).
    pub fn vit(&self) -> Option<&VisionTransformer> {
        match self {
            Self::Vit(model) => Some(model),
            Self::Cnn(_) => None,
        }
    }

    pub fn into_vit(self) -> Option<VisionTransformer> {
        match self {
            Self::Vit(model) => Some(model),
            Self::Cnn(_) => None,
        }
    }

    pub fn architecture(&self) -> Architecture {
        match self {
            Self::Vit(_) => Architecture::Vit,
            Self::Cnn(_) => Architecture::Cnn,
        }
    }
}
