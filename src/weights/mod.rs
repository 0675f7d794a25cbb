//! Weights as safetensors, named and laid out exactly like the seed's PyTorch `state_dict`.
//!
//! Burn keeps a linear layer's weight as `[in, out]` and names LayerNorm's parameters
//! `gamma`/`beta`; PyTorch has `[out, in]` and `weight`/`bias`, and the seed's MLP lives in an
//! `nn.Sequential` (`mlp.0`, `mlp.3`). [`torch_name`] and the transpose of every 2-D tensor are
//! the whole translation. The model config travels in the file's metadata.
//!
//! `names` is that translation, `codec` the bytes (with every check a hostile file needs;
//! `gzipped` inflates a compressed file first),
//! `readback` the tensors off a device, `average` the mean of several files.

mod average;
mod codec;
mod error;
mod gzipped;
mod names;
mod readback;

use burn::module::Module;
use burn::tensor::Device;

use crate::model::{Classifier, ModelConfig};

pub use average::{AverageError, average};
#[cfg(feature = "train")]
pub(crate) use codec::decode_checked;
pub use codec::{
    CONFIG_KEY, MAX_HEADER_BYTES, MAX_HEADER_ENTRIES, check_header_bounds, decode, decode_within,
    encode, encode_with,
};
pub(crate) use error::cut;
pub use error::{Mismatch, WeightsError, brief};
pub use gzipped::{Ungzipping, ungzipped};
pub(crate) use names::ParamLoader;
#[cfg(feature = "train")]
pub(crate) use names::transpose;
pub use names::{expected_tensors, torch_name};
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use readback::read_all;
pub(crate) use readback::read_all_async;
#[cfg(not(target_arch = "wasm32"))]
pub use readback::to_safetensors;
pub use readback::{ReadbackError, to_safetensors_async};
#[cfg(feature = "train")]
pub(crate) use readback::{model_tensors, named};

/// One tensor as PyTorch names and lays it out.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedTensor {
    pub name: String,
    pub shape: Vec<usize>,
    pub values: Vec<f32>,
}

/// A parsed weights file: its config and its tensors, not yet on any device.
#[derive(Debug, Clone)]
pub struct WeightsFile {
    pub config: ModelConfig,
    pub tensors: Vec<NamedTensor>,
}

impl WeightsFile {
    /// Builds the model on `device` with these weights; on an autodiff device it is ready
    /// to train.
    pub fn into_model(&self, device: &Device) -> Classifier {
        let mut loader = ParamLoader {
            path: Default::default(),
            tensors: self
                .tensors
                .iter()
                .map(|tensor| (tensor.name.as_str(), tensor))
                .collect(),
        };
        // Weights are loaded as plain data; `train` is Burn's one way into autodiff.
        let model = self.config.init(&device.clone().inner()).map(&mut loader);
        if device.is_autodiff() {
            model.train()
        } else {
            model
        }
    }
}

/// Parses and loads in one step.
pub fn load(bytes: &[u8], device: &Device) -> Result<(Classifier, ModelConfig), WeightsError> {
    let file = decode(bytes)?;
    let model = file.into_model(device);
    Ok((model, file.config))
}
