//! A ViT's shape (image and patch size, width, depth, heads, MLP width, dropout), with the
//! seed's defaults, and the model it builds.

use burn::config::Config;

use super::VisionTransformer;
use super::randomness::exclusive;
use burn::tensor::Device;

/// Everything that defines a ViT's shape. The defaults are the seed's PyTorch model.
#[derive(Config, Debug, PartialEq)]
pub struct VitConfig {
    /// Height and width of the (square) input image, in pixels.
    #[config(default = 28)]
    pub image_size: usize,
    /// Input channels (1 for MNIST).
    #[config(default = 1)]
    pub channels: usize,
    /// Side of a square patch, in pixels; must divide `image_size`.
    #[config(default = 7)]
    pub patch_size: usize,
    /// Width D of every token.
    #[config(default = 64)]
    pub dim: usize,
    /// Number L of encoder blocks.
    #[config(default = 6)]
    pub depth: usize,
    /// Attention heads per block; must divide `dim`.
    #[config(default = 8)]
    pub heads: usize,
    /// Hidden width of each block's MLP.
    #[config(default = 128)]
    pub mlp_dim: usize,
    /// Dropout after the embeddings, on attention probabilities, and in the MLP.
    #[config(default = 0.1)]
    pub dropout: f64,
    /// Output classes.
    #[config(default = 10)]
    pub num_classes: usize,
}

/// Why a configuration cannot describe a ViT.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("patch size {patch} does not divide image size {image}")]
    PatchDoesNotDivideImage { patch: usize, image: usize },
    #[error("{heads} heads do not divide dim {dim}")]
    HeadsDoNotDivideDim { heads: usize, dim: usize },
    #[error("dropout {0} is not in [0, 1)")]
    Dropout(f64),
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    #[error("convolution {0} has no output channels")]
    ZeroWidth(usize),
    #[error("{layers} convolution blocks pool a {image}-pixel image away (at most {max})", max = super::cnn::MAX_CONV_LAYERS)]
    PooledAway { layers: usize, image: usize },
    #[error("a kernel of {0} pixels has no centre (it must be odd)")]
    EvenKernel(usize),
}

/// The named starting points, each a model and a recipe, as the page and the CLI offer them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// The seed's PyTorch model and recipe (patch 7).
    Seed,
    /// The shipped lab model (patch 4: a 7×7 grid for the attention maps).
    Lab,
    /// The CNN of `tools/seed_cnn.py`, the ViT's size, and the recipe of the lab model's
    /// teacher.
    Cnn,
}

impl Preset {
    pub const ALL: [Preset; 3] = [Preset::Seed, Preset::Lab, Preset::Cnn];

    /// As the CLI and the page spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Seed => "seed",
            Self::Lab => "lab",
            Self::Cnn => "cnn",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|preset| preset.name() == text)
    }
}

impl std::str::FromStr for Preset {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Self::parse(text).ok_or_else(|| format!("unknown preset `{text}` (seed, lab, cnn)"))
    }
}

impl VitConfig {
    /// The seed's PyTorch model exactly: 28×28×1, patch 7, dim 64, depth 6, heads 8, MLP 128.
    pub fn seed() -> Self {
        Self::new()
    }

    /// The browser's model: patch 4 gives a 7×7 grid, fine enough for attention heatmaps.
    pub fn lab() -> Self {
        Self::new().with_patch_size(4)
    }

    /// Patches per side.
    pub fn grid_size(&self) -> usize {
        self.image_size / self.patch_size
    }

    /// Number N of patches.
    pub fn num_patches(&self) -> usize {
        self.grid_size() * self.grid_size()
    }

    /// Tokens in the sequence: the patches plus the class token.
    pub fn num_tokens(&self) -> usize {
        self.num_patches() + 1
    }

    /// Length of a flattened patch, P²·C.
    pub fn patch_dim(&self) -> usize {
        self.patch_size * self.patch_size * self.channels
    }

    /// Checks that the sizes fit together; [`VitConfig::init`] panics on a config that fails.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (name, value) in [
            ("image_size", self.image_size),
            ("channels", self.channels),
            ("patch_size", self.patch_size),
            ("dim", self.dim),
            ("depth", self.depth),
            ("heads", self.heads),
            ("mlp_dim", self.mlp_dim),
            ("num_classes", self.num_classes),
        ] {
            if value == 0 {
                return Err(ConfigError::Zero(name));
            }
        }
        if !self.image_size.is_multiple_of(self.patch_size) {
            return Err(ConfigError::PatchDoesNotDivideImage {
                patch: self.patch_size,
                image: self.image_size,
            });
        }
        if !self.dim.is_multiple_of(self.heads) {
            return Err(ConfigError::HeadsDoNotDivideDim {
                heads: self.heads,
                dim: self.dim,
            });
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return Err(ConfigError::Dropout(self.dropout));
        }
        Ok(())
    }

    /// Parameters of the model this config describes, counted without building it (by
    /// [`VitConfig::cost`], in checked arithmetic); saturates at `usize::MAX` (32 bits in the
    /// browser) for a config too big to count or build.
    pub fn num_params(&self) -> usize {
        super::ModelCost::params_or_max(self.cost())
    }

    /// Builds a randomly initialised model.
    ///
    /// # Panics
    /// If [`VitConfig::validate`] fails.
    pub fn init(&self, device: &Device) -> VisionTransformer {
        if let Err(error) = self.validate() {
            panic!("invalid ViT config: {error}");
        }
        exclusive(|| VisionTransformer::new(self, device))
    }
}
