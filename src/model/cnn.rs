//! The CNN the ViT paper argues against: convolutions build in locality and translation
//! equivariance, where a ViT must learn them from data. Small enough to train beside the
//! seed ViT on a CPU, with close to its parameter count (204,330 against 204,810).
//!
//! Field names follow `tools/seed_cnn.py` (`convs.0`, `convs.1`, …, `fc`, `head`) so that
//! [`crate::weights`] maps them by path, as for the ViT.

use burn::config::Config;
use burn::module::Module;
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{Dropout, DropoutConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::tensor::activation::relu;
use burn::tensor::{Device, Tensor};

use super::randomness::exclusive;
use super::{ConfigError, dropout, fused};

/// Everything that defines the CNN's shape. The defaults are `tools/seed_cnn.py`'s model.
#[derive(Config, Debug, PartialEq)]
pub struct CnnConfig {
    /// Height and width of the (square) input image, in pixels.
    #[config(default = 28)]
    pub image_size: usize,
    /// Input channels (1 for MNIST).
    #[config(default = 1)]
    pub channels: usize,
    /// Output channels of each convolution; each is followed by ReLU and a 2×2 max pool.
    #[config(default = "vec![32, 64, 128]")]
    pub widths: Vec<usize>,
    /// Side of the square kernels; odd, so that zero padding of `kernel / 2` keeps the size.
    #[config(default = 3)]
    pub kernel_size: usize,
    /// Width of the hidden layer between the flattened features and the head.
    #[config(default = 96)]
    pub hidden: usize,
    /// Dropout on the hidden layer.
    #[config(default = 0.25)]
    pub dropout: f64,
    /// Output classes.
    #[config(default = 10)]
    pub num_classes: usize,
}

/// The PyTorch name of the first convolution's weight: what marks a file's tensors as a CNN's,
/// and where the page finds the filters it shows.
pub const FIRST_CONV_WEIGHT: &str = "convs.0.weight";

/// More convolutions than this would pool a 28-pixel image away.
pub const MAX_CONV_LAYERS: usize = 4;

impl CnnConfig {
    /// The reference model of `tools/seed_cnn.py`.
    pub fn seed() -> Self {
        Self::new()
    }

    /// Side of the feature map after `layers` convolution blocks (each pool halves it,
    /// rounding down as PyTorch's `MaxPool2d(2)` does).
    pub fn side_after(&self, layers: usize) -> usize {
        (0..layers).fold(self.image_size, |side, _| side / 2)
    }

    /// Length of the flattened features the hidden layer reads.
    pub fn flat_features(&self) -> usize {
        let side = self.side_after(self.widths.len());
        self.widths.last().copied().unwrap_or(self.channels) * side * side
    }

    /// Each convolution's receptive field, in input pixels, as the layer sees it (before its
    /// pool): the CNN's counterpart of a ViT layer's mean attention distance (the paper's
    /// Fig. 7, right).
    pub fn receptive_fields(&self) -> Vec<usize> {
        let (mut field, mut jump) = (1, 1);
        self.widths
            .iter()
            .map(|_| {
                field += (self.kernel_size - 1) * jump;
                let seen = field;
                field += jump; // the 2×2 pool, stride 2
                jump *= 2;
                seen
            })
            .collect()
    }

    /// Checks that the sizes fit together; [`CnnConfig::init`] panics on a config that fails.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (name, value) in [
            ("image_size", self.image_size),
            ("channels", self.channels),
            ("kernel_size", self.kernel_size),
            ("hidden", self.hidden),
            ("num_classes", self.num_classes),
            ("widths", self.widths.len()),
        ] {
            if value == 0 {
                return Err(ConfigError::Zero(name));
            }
        }
        if let Some(position) = self.widths.iter().position(|&width| width == 0) {
            return Err(ConfigError::ZeroWidth(position));
        }
        if self.widths.len() > MAX_CONV_LAYERS || self.side_after(self.widths.len()) == 0 {
            return Err(ConfigError::PooledAway {
                layers: self.widths.len(),
                image: self.image_size,
            });
        }
        if self.kernel_size.is_multiple_of(2) {
            return Err(ConfigError::EvenKernel(self.kernel_size));
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return Err(ConfigError::Dropout(self.dropout));
        }
        Ok(())
    }

    /// Builds a randomly initialised model.
    ///
    /// # Panics
    /// If [`CnnConfig::validate`] fails.
    pub fn init(&self, device: &Device) -> ConvNet {
        if let Err(error) = self.validate() {
            panic!("invalid CNN config: {error}");
        }
        let pad = self.kernel_size / 2;
        let inputs = std::iter::once(self.channels).chain(self.widths.iter().copied());
        let convs = inputs.zip(&self.widths).map(|(input, &output)| {
            Conv2dConfig::new([input, output], [self.kernel_size; 2])
                .with_padding(PaddingConfig2d::Explicit(pad, pad, pad, pad))
                .init(device)
        });
        exclusive(|| ConvNet {
            convs: convs.collect(),
            pool: MaxPool2dConfig::new([2, 2]).init(),
            fc: LinearConfig::new(self.flat_features(), self.hidden).init(device),
            dropout: DropoutConfig::new(self.dropout).init(),
            head: LinearConfig::new(self.hidden, self.num_classes).init(device),
        })
    }
}

/// Convolution blocks (conv, ReLU, 2×2 max pool), then a hidden layer and a linear head.
#[derive(Module, Debug)]
pub struct ConvNet {
    /// `[width_i, width_{i-1}, k, k]` each, PyTorch's layout.
    pub convs: Vec<Conv2d>,
    pub pool: MaxPool2d,
    /// `[flat → hidden]`
    pub fc: Linear,
    pub dropout: Dropout,
    /// `[hidden → classes]`
    pub head: Linear,
}

impl ConvNet {
    /// Class scores.
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`, normalised pixels
    /// - output: `[batch, classes]`
    pub fn forward(&self, images: Tensor<4>) -> Tensor<2> {
        let mut features = images; // [B, C, H, W]
        for conv in &self.convs {
            // Max pool and ReLU commute; pooling first gives ReLU a quarter of the work.
            features = relu(self.pool.forward(conv.forward(features))); // [B, w_i, H/2^i, W/2^i]
        }
        let [batch, channels, height, width] = features.dims();
        let flat = features.reshape([batch, channels * height * width]); // [B, F], as torch's flatten
        let hidden = relu(fused::linear(&self.fc, &flat)); // [B, hidden]
        let hidden = dropout(&self.dropout, hidden); // [B, hidden]
        fused::linear(&self.head, &hidden) // [B, classes]
    }
}
