//! One checkpoint format for the page and `vit train`: a safetensors file holding the
//! weights (the seed's names and layout, as a weights file has them), AdamW's two moments of
//! every parameter under PyTorch's names for them (`optimizer.exp_avg.<name>`,
//! `optimizer.exp_avg_sq.<name>`, in the weight's layout), and the run's state as JSON in the
//! metadata. A run saved in the page resumes on the command line and the other way round.

use std::collections::HashMap;

use burn::tensor::{Device, Tensor, TensorData};

use super::optimizer::Moments;
use super::{SavedRunError, Session, SessionState};
use crate::model::Budget;
use crate::weights::{self, NamedTensor, WeightsError, WeightsFile};

pub use super::state::SESSION_KEY;
/// Metadata key of each parameter's AdamW update count (a JSON list, in module order);
/// absent when the moments are not kept.
pub const ADAM_TIMES_KEY: &str = "vitlab.adam_times";
const FIRST_MOMENT: &str = "optimizer.exp_avg.";
const SECOND_MOMENT: &str = "optimizer.exp_avg_sq.";

/// Why bytes are not a checkpoint this app can resume.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CheckpointError {
    #[error("{0}")]
    Weights(#[from] WeightsError),
    #[error("it holds weights but no training run (no `{SESSION_KEY}` in its metadata)")]
    NoRun,
    #[error("its run state does not parse ({0})")]
    State(String),
    #[error("its run cannot be resumed: {0}")]
    Run(#[from] SavedRunError),
    #[error("its optimiser state is out of range: {0}")]
    Moments(String),
}

/// AdamW's state of every parameter, in PyTorch's layout, in module order, each named as
/// its parameter is.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedMoments {
    pub times: Vec<usize>,
    pub first: Vec<NamedTensor>,
    pub second: Vec<NamedTensor>,
}

/// A training run at rest: what it needs to go on exactly where it stopped.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    pub state: SessionState,
    pub weights: WeightsFile,
    /// `None` for a run saved before its moments were kept: AdamW then starts afresh.
    pub moments: Option<SavedMoments>,
}

impl Checkpoint {
    /// Reads and checks a checkpoint: every check of a weights file, the run's plan and
    /// counters as a new run's would be (held to `budget`), and the moments' names, shapes
    /// and values.
    pub fn decode(bytes: &[u8], budget: &Budget) -> Result<Self, CheckpointError> {
        let mut times = None;
        let checked = weights::decode_checked(bytes, budget, |config, metadata| {
            let Some(json) = metadata.get(ADAM_TIMES_KEY) else {
                return Ok(Vec::new());
            };
            times = Some(serde_json::from_str::<Vec<usize>>(json).map_err(|error| {
                WeightsError::Header(format!("{ADAM_TIMES_KEY}: {}", weights::brief(&error)))
            })?);
            let names = weights::expected_tensors(config);
            Ok([FIRST_MOMENT, SECOND_MOMENT]
                .into_iter()
                .flat_map(|prefix| {
                    let named = |(name, shape): &(String, Vec<usize>)| {
                        (format!("{prefix}{name}"), shape.clone())
                    };
                    names.iter().map(named).collect::<Vec<_>>()
                })
                .collect())
        })?;
        let state = run_state(&checked.metadata)?;
        state.summary_within(budget)?;
        if state.plan.config != checked.config {
            return Err(SavedRunError::ModelMismatch.into());
        }
        let mut tensors = checked.tensors;
        // The model's tensors, then (with moments) two of each: no second listing of the model.
        let count = tensors.len() / if times.is_some() { 3 } else { 1 };
        let moments = match times {
            None => None,
            Some(times) => {
                let unprefixed = |list: Vec<NamedTensor>, prefix: &str| -> Vec<NamedTensor> {
                    let strip = |tensor: NamedTensor| NamedTensor {
                        name: tensor.name[prefix.len()..].to_string(),
                        ..tensor
                    };
                    list.into_iter().map(strip).collect()
                };
                let second = unprefixed(tensors.split_off(count * 2), SECOND_MOMENT);
                let first = unprefixed(tensors.split_off(count), FIRST_MOMENT);
                check_moments(&times, &second, state.step)?;
                Some(SavedMoments {
                    times,
                    first,
                    second,
                })
            }
        };
        Ok(Self {
            state,
            weights: WeightsFile {
                config: checked.config,
                tensors,
            },
            moments,
        })
    }

    /// The bytes [`Checkpoint::decode`] reads.
    pub fn encode(&self) -> Vec<u8> {
        let state = serde_json::to_string(&self.state).expect("a run state serialises");
        let mut extra = vec![(SESSION_KEY, state)];
        let mut tensors = self.weights.tensors.clone();
        if let Some(moments) = &self.moments {
            let times = serde_json::to_string(&moments.times).expect("counts serialise");
            extra.push((ADAM_TIMES_KEY, times));
            let renamed = |prefix: &'static str, list: &[NamedTensor]| {
                list.iter()
                    .map(|tensor| NamedTensor {
                        name: format!("{prefix}{}", tensor.name),
                        ..tensor.clone()
                    })
                    .collect::<Vec<_>>()
            };
            tensors.extend(renamed(FIRST_MOMENT, &moments.first));
            tensors.extend(renamed(SECOND_MOMENT, &moments.second));
        }
        weights::encode_with(&self.weights.config, &extra, &tensors)
    }
}

fn run_state(metadata: &HashMap<String, String>) -> Result<SessionState, CheckpointError> {
    let json = metadata.get(SESSION_KEY).ok_or(CheckpointError::NoRun)?;
    serde_json::from_str(json).map_err(|error| CheckpointError::State(weights::brief(&error)))
}

/// An update count above the run's steps, or a negative second moment (its square root would
/// be NaN in the next update), cannot come from a real run.
fn check_moments(
    times: &[usize],
    second: &[NamedTensor],
    steps: usize,
) -> Result<(), CheckpointError> {
    if times.len() != second.len() {
        return Err(CheckpointError::Moments(format!(
            "{} update counts for {} parameters",
            times.len(),
            second.len()
        )));
    }
    if let Some(time) = times.iter().find(|&&time| time > steps) {
        return Err(CheckpointError::Moments(format!(
            "an update count of {time} after {steps} steps"
        )));
    }
    if let Some(tensor) = second
        .iter()
        .find(|tensor| tensor.values.iter().any(|&value| value < 0.0))
    {
        return Err(CheckpointError::Moments(format!(
            "`{}` has negative values",
            weights::brief(&tensor.name)
        )));
    }
    Ok(())
}

/// The device tensors of a checkpoint, before they are read back: the weights, then each
/// parameter's first and second moments, all flat in PyTorch's layout.
struct OnDevice {
    names: Vec<(String, Vec<usize>)>,
    tensors: Vec<Tensor<1>>,
    times: Option<Vec<usize>>,
}

impl Session {
    fn on_device(&self) -> OnDevice {
        let (names, mut tensors) = weights::model_tensors(&self.inference_model());
        let moments = self.trainer_moments();
        // Saved only when every parameter has them (after the first step, all do).
        let complete = moments.len() == names.len() && moments.iter().all(Option::is_some);
        let times = complete.then(|| {
            let moments: Vec<&Moments> = moments.iter().flatten().collect();
            for pick in [
                |m: &Moments| m.first.clone(),
                |m: &Moments| m.second.clone(),
            ] {
                for ((_, shape), moments) in names.iter().zip(&moments) {
                    tensors.push(torch_layout(pick(moments), shape));
                }
            }
            moments.iter().map(|moments| moments.time).collect()
        });
        OnDevice {
            names,
            tensors,
            times,
        }
    }

    fn assemble(
        &self,
        names: Vec<(String, Vec<usize>)>,
        values: Vec<Vec<f32>>,
        times: Option<Vec<usize>>,
    ) -> Checkpoint {
        let count = names.len();
        let mut all = values.into_iter();
        let mut take =
            |count: usize| weights::named(names.clone(), all.by_ref().take(count).collect());
        let weights = take(count);
        let moments = times.map(|times| SavedMoments {
            times,
            first: take(count),
            second: take(count),
        });
        Checkpoint {
            state: self.state(),
            weights: WeightsFile {
                config: self.plan.config.clone(),
                tensors: weights,
            },
            moments,
        }
    }

    /// The run as a checkpoint, read back synchronously (natively; in the browser use
    /// [`Session::checkpoint_async`]).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn checkpoint(&self) -> Checkpoint {
        let OnDevice {
            names,
            tensors,
            times,
        } = self.on_device();
        self.assemble(names, weights::read_all(tensors), times)
    }

    /// The run as a checkpoint, with one asynchronous readback of everything.
    pub async fn checkpoint_async(&self) -> Result<Checkpoint, weights::ReadbackError> {
        let OnDevice {
            names,
            tensors,
            times,
        } = self.on_device();
        let values = weights::read_all_async(tensors).await?;
        Ok(self.assemble(names, values, times))
    }

    /// Continues a checkpointed run on `device`, with its moments when it has them.
    pub fn resume(checkpoint: Checkpoint, device: &Device) -> Result<Self, SavedRunError> {
        if checkpoint.weights.config != checkpoint.state.plan.config {
            return Err(SavedRunError::ModelMismatch);
        }
        let model = checkpoint.weights.into_model(&device.clone().autodiff());
        let moments = checkpoint.moments.map(|saved| {
            let inner = device.clone().inner();
            (0..saved.times.len())
                .map(|i| {
                    Some(Moments {
                        time: saved.times[i],
                        first: burn_layout(&saved.first[i], &inner),
                        second: burn_layout(&saved.second[i], &inner),
                    })
                })
                .collect()
        });
        Ok(Session::resume_with(
            checkpoint.state,
            model,
            moments.unwrap_or_default(),
            device,
        )?)
    }
}

/// A flat Burn-layout parameter tensor in PyTorch's layout (a linear weight transposed).
fn torch_layout(flat: Tensor<1>, torch_shape: &[usize]) -> Tensor<1> {
    match *torch_shape {
        [rows, cols] => flat
            .reshape([cols, rows])
            .transpose()
            .reshape([rows * cols]),
        _ => flat,
    }
}

/// A saved tensor in PyTorch's layout as a flat Burn-layout tensor on `device`.
fn burn_layout(tensor: &NamedTensor, device: &Device) -> Tensor<1> {
    let values = match *tensor.shape.as_slice() {
        [rows, cols] => weights::transpose(&tensor.values, rows, cols),
        _ => tensor.values.clone(),
    };
    let len = values.len();
    Tensor::from_data(TensorData::new(values, [len]), device)
}
