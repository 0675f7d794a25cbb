//! A model's tensors read off its device: natively at once, in the browser awaited, and
//! either way in one readback.

use burn::tensor::{Tensor, TensorData};

use super::names::collect;
use super::{NamedTensor, encode};
use crate::model::{Classifier, ModelConfig};

fn to_values(data: TensorData) -> Vec<f32> {
    data.convert::<f32>()
        .try_into_vec::<f32>()
        .expect("a float tensor converts to f32")
}

/// A device that could not hand its tensors back (a lost WebGPU device, say).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("reading the tensors from the device failed: {0}")]
pub struct ReadbackError(pub String);

/// Serialises a model natively. In the browser use [`to_safetensors_async`].
#[cfg(not(target_arch = "wasm32"))]
pub fn to_safetensors(model: &Classifier, config: &ModelConfig) -> Vec<u8> {
    let (names, flat) = model_tensors(model);
    encode(config, &named(names, read_all(flat)))
}

/// Serialises a model without a synchronous read, as the browser requires; one readback.
pub async fn to_safetensors_async(
    model: &Classifier,
    config: &ModelConfig,
) -> Result<Vec<u8>, ReadbackError> {
    let (names, flat) = model_tensors(model);
    Ok(encode(config, &named(names, read_all_async(flat).await?)))
}

/// Each parameter's name and PyTorch shape, and its values flattened in PyTorch's layout,
/// still on the device.
pub(crate) fn model_tensors(model: &Classifier) -> (Vec<(String, Vec<usize>)>, Vec<Tensor<1>>) {
    collect(model)
        .into_iter()
        .map(|(name, shape, flat)| ((name, shape), flat))
        .unzip()
}

/// Names and shapes joined to the values read back for them.
pub(crate) fn named(names: Vec<(String, Vec<usize>)>, values: Vec<Vec<f32>>) -> Vec<NamedTensor> {
    names
        .into_iter()
        .zip(values)
        .map(|((name, shape), values)| NamedTensor {
            name,
            shape,
            values,
        })
        .collect()
}

/// The values of flat tensors of one device, read back together (synchronously: natively).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn read_all(tensors: Vec<Tensor<1>>) -> Vec<Vec<f32>> {
    let lengths: Vec<usize> = tensors.iter().map(|tensor| tensor.dims()[0]).collect();
    if tensors.is_empty() {
        return Vec::new();
    }
    split(to_values(Tensor::cat(tensors, 0).into_data()), &lengths)
}

/// The values of flat tensors of one device with one readback: joined on the device, read
/// once and split, so a save costs one round trip to a GPU rather than one per tensor.
pub(crate) async fn read_all_async(
    tensors: Vec<Tensor<1>>,
) -> Result<Vec<Vec<f32>>, ReadbackError> {
    let lengths: Vec<usize> = tensors.iter().map(|tensor| tensor.dims()[0]).collect();
    if tensors.is_empty() {
        return Ok(Vec::new());
    }
    let data = Tensor::cat(tensors, 0)
        .into_data_async()
        .await
        .map_err(|error| ReadbackError(format!("{error:?}")))?;
    Ok(split(to_values(data), &lengths))
}

fn split(values: Vec<f32>, lengths: &[usize]) -> Vec<Vec<f32>> {
    let mut rest = values.as_slice();
    lengths
        .iter()
        .map(|&length| {
            let (head, tail) = rest.split_at(length);
            rest = tail;
            head.to_vec()
        })
        .collect()
}
