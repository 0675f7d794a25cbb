//! The mean of several weights files.

use super::{NamedTensor, WeightsFile};
use crate::model::ModelConfig;

/// Why files cannot be averaged (files are counted from 1, as given).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AverageError {
    #[error("there are no weights to average")]
    Nothing,
    #[error("file {file} has another config than file 1: {config:?} and {first:?}")]
    ConfigDiffers {
        file: usize,
        config: Box<ModelConfig>,
        first: Box<ModelConfig>,
    },
    #[error("file {file} has no tensor {name} of shape {shape:?}")]
    MissingTensor {
        file: usize,
        name: String,
        shape: Vec<usize>,
    },
}

/// The element-wise mean of weights files of one config, e.g. of the last epochs of a run
/// (stochastic weight averaging, Izmailov et al., UAI 2018). Sums in `f64`.
pub fn average(files: &[WeightsFile]) -> Result<WeightsFile, AverageError> {
    let (first, rest) = files.split_first().ok_or(AverageError::Nothing)?;
    for (index, other) in rest.iter().enumerate() {
        if other.config != first.config {
            return Err(AverageError::ConfigDiffers {
                file: index + 2,
                config: Box::new(other.config.clone()),
                first: Box::new(first.config.clone()),
            });
        }
    }
    let tensors = first
        .tensors
        .iter()
        .map(|tensor| {
            let mut sum: Vec<f64> = tensor.values.iter().map(|&v| f64::from(v)).collect();
            for (index, other) in rest.iter().enumerate() {
                let same = other
                    .tensors
                    .iter()
                    .find(|t| t.name == tensor.name && t.shape == tensor.shape)
                    .ok_or_else(|| AverageError::MissingTensor {
                        file: index + 2,
                        name: tensor.name.clone(),
                        shape: tensor.shape.clone(),
                    })?;
                for (total, value) in sum.iter_mut().zip(&same.values) {
                    *total += f64::from(*value);
                }
            }
            Ok(NamedTensor {
                name: tensor.name.clone(),
                shape: tensor.shape.clone(),
                values: sum
                    .iter()
                    .map(|total| (total / files.len() as f64) as f32)
                    .collect(),
            })
        })
        .collect::<Result<Vec<_>, AverageError>>()?;
    Ok(WeightsFile {
        config: first.config.clone(),
        tensors,
    })
}
