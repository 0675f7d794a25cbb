//! The second half of a CPU step, computed by someone else: what the browser's training worker
//! hands its helper worker (the parameters, the half's images and labels, the step's dropout
//! stream) and what comes back (the half's loss, correct count and gradients). Values are held
//! flat, in the model's parameter order, beside a small header, so that the workers' messages
//! carry them as bytes beside the header: copied once rather than written out as JSON.
//!
//! The helper runs [`half_gradients`] on the same values the worker would have used, so its
//! half is the one the worker would have computed itself, bit for bit: whether a helper took
//! part never shows in the weights.

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::{Device, Int, Tensor, TensorData};
use serde::{Deserialize, Serialize};

use super::objective::{BatchGradients, Objective};
use super::shards::{Half, half_gradients};
use crate::data::Batch;
use crate::model::{Classifier, ModelConfig};

/// Why a half could not be computed or taken back: the two workers disagree about the model
/// or the message was damaged. The worker then computes the half itself.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HalfJobError {
    #[error("{what}: {found} values where the model has {expected}")]
    WrongLength {
        what: &'static str,
        found: usize,
        expected: usize,
    },
    #[error(
        "the half's images are {found:?}, where the model takes [n, {channels}, {side}, {side}]"
    )]
    WrongImages {
        found: [usize; 4],
        channels: usize,
        side: usize,
    },
    #[error("a share of {share} of the batch, or a label smoothing of {smoothing}")]
    OutOfRange { share: f64, smoothing: f32 },
    #[error("the half has {images} images and {labels} labels")]
    LabelsMismatch { images: usize, labels: usize },
    #[error("a label of {0} where the model has {1} classes")]
    BadLabel(i64, usize),
    #[error("{0}")]
    Damaged(String),
}

/// What travels as JSON beside a job's bytes (the parameters, then the images).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HalfJobHeader {
    /// The step's stream (`rng::step_seed`), from which the half's dropout masks come.
    pub stream: u64,
    pub smoothing: f32,
    /// The half's share of the batch's images: its loss is counted as that share of the mean.
    pub share: f64,
    /// Number of parameter values at the front of the bytes.
    pub params: usize,
    /// `[half, channels, height, width]`, the images after the parameters.
    pub image_shape: [usize; 4],
    pub labels: Vec<i64>,
}

/// The second half of a step, ready to hand over.
#[derive(Debug, Clone, PartialEq)]
pub struct HalfJob {
    pub header: HalfJobHeader,
    /// Every parameter's values, flattened, in module order.
    pub params: Vec<f32>,
    /// The half's images, `header.image_shape`, flattened.
    pub images: Vec<f32>,
}

/// What travels as JSON beside a reply's bytes (the gradients).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HalfDoneHeader {
    /// The half's share of the batch's mean loss.
    pub loss: f32,
    pub correct: i64,
    /// Per parameter in module order, whether it has a gradient (its values are in the bytes
    /// only if it has).
    pub present: Vec<bool>,
}

/// A half's outcome, as the helper sends it back.
#[derive(Debug, Clone, PartialEq)]
pub struct HalfDone {
    pub header: HalfDoneHeader,
    pub gradients: Vec<f32>,
}

impl HalfJob {
    /// The second half of `batch` for a step of `model` with stream `stream`. `model` and
    /// `batch` must be on the CPU (their values are read at once).
    pub fn second_half_of(
        model: &Classifier,
        batch: &Batch,
        objective: Objective<'_>,
        stream: u64,
    ) -> Self {
        let [images, channels, height, width] = batch.images.dims();
        let (start, len) = Half::Second.range(images);
        let half_images = batch.images.clone().narrow(0, start, len); // [B/2, C, H, W]
        let labels = batch.labels.clone().narrow(0, start, len); // [B/2]
        let params = parameter_values(model);
        Self {
            header: HalfJobHeader {
                stream,
                smoothing: objective.smoothing,
                share: len as f64 / images as f64,
                params: params.len(),
                image_shape: [len, channels, height, width],
                labels: ints(labels),
            },
            params,
            images: floats(half_images.flatten::<1>(0, 3)),
        }
    }

    /// Runs the half on `model` (the helper's copy of `config`'s model on the autodiff
    /// `device`: its values are replaced by the job's), the computation the worker would have
    /// run itself.
    pub fn run(
        self,
        model: Classifier,
        config: &ModelConfig,
        device: &Device,
    ) -> Result<HalfDone, HalfJobError> {
        let header = self.header;
        let (side, channels) = config.input();
        let [half, c, h, w] = header.image_shape;
        if half == 0 || [c, h, w] != [channels, side, side] {
            return Err(HalfJobError::WrongImages {
                found: header.image_shape,
                channels,
                side,
            });
        }
        if header.labels.len() != half {
            return Err(HalfJobError::LabelsMismatch {
                images: half,
                labels: header.labels.len(),
            });
        }
        if !(header.share > 0.0 && header.share <= 1.0 && (0.0..1.0).contains(&header.smoothing)) {
            return Err(HalfJobError::OutOfRange {
                share: header.share,
                smoothing: header.smoothing,
            });
        }
        let classes = config.num_classes();
        if let Some(&label) = header
            .labels
            .iter()
            .find(|&&l| !usize::try_from(l).is_ok_and(|l| l < classes))
        {
            return Err(HalfJobError::BadLabel(label, classes));
        }
        let model = with_values(model, &self.params)?;
        let images =
            Tensor::<4>::from_data(TensorData::new(self.images, header.image_shape), device); // [half, C, H, W]
        let labels = Tensor::<1, Int>::from_data(TensorData::new(header.labels, [half]), device); // [half]
        let objective = Objective {
            smoothing: header.smoothing,
            teacher: None,
        };
        let outcome = half_gradients(
            &model,
            images,
            labels,
            objective,
            header.stream,
            Half::Second,
            header.share,
        );
        let mut collect = CollectGradients {
            gradients: outcome.gradients,
            present: Vec::new(),
            values: Vec::new(),
        };
        model.visit(&mut collect);
        Ok(HalfDone {
            header: HalfDoneHeader {
                loss: floats(outcome.loss)[0],
                correct: ints(outcome.correct)[0],
                present: collect.present,
            },
            gradients: collect.values,
        })
    }
}

impl HalfDone {
    /// The half as the worker's own [`half_gradients`] would have given it: the loss and
    /// count on the autodiff `device`, the gradients as tensors of `model`'s parameters (by
    /// their ids) on its inner side.
    pub fn into_batch_gradients(
        self,
        model: &Classifier,
        device: &Device,
    ) -> Result<BatchGradients, HalfJobError> {
        let inner = device.clone().inner();
        let mut register = RegisterGradients {
            present: self.header.present.iter(),
            values: &self.gradients,
            device: &inner,
            gradients: GradientsParams::new(),
            error: None,
        };
        model.visit(&mut register);
        if let Some(error) = register.error {
            return Err(error);
        }
        if register.present.next().is_some() || !register.values.is_empty() {
            return Err(HalfJobError::Damaged(
                "it sent more gradients than the model has values".into(),
            ));
        }
        let gradients = register.gradients;
        let loss = TensorData::new(vec![self.header.loss], [1]);
        let correct = TensorData::new(vec![self.header.correct], [1]);
        Ok(BatchGradients {
            loss: Tensor::from_data(loss, device),
            correct: Tensor::from_data(correct, device),
            gradients,
        })
    }
}

/// Every parameter's values, flattened and joined in module order (the model on the CPU).
pub fn parameter_values(model: &Classifier) -> Vec<f32> {
    struct Collect(Vec<Tensor<1>>);
    impl ModuleVisitor for Collect {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
            self.0.push(param.val().inner().flatten::<1>(0, D - 1));
        }
    }
    let mut collect = Collect(Vec::new());
    model.visit(&mut collect);
    if collect.0.is_empty() {
        return Vec::new();
    }
    floats(Tensor::cat(collect.0, 0))
}

/// `model` with every parameter's values taken, in module order, from `values`, each a new
/// leaf of the autodiff graph.
fn with_values(model: Classifier, values: &[f32]) -> Result<Classifier, HalfJobError> {
    let expected = model.num_params();
    if values.len() != expected {
        return Err(HalfJobError::WrongLength {
            what: "the parameters",
            found: values.len(),
            expected,
        });
    }
    struct Load<'a> {
        values: &'a [f32],
    }
    impl ModuleMapper for Load<'_> {
        fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
            param.map(|tensor| {
                let shape = tensor.shape();
                let (own, rest) = self.values.split_at(shape.num_elements());
                self.values = rest;
                let data = TensorData::new(own.to_vec(), shape);
                Tensor::<D>::from_data(data, &tensor.device()).require_grad()
            })
        }
    }
    Ok(model.map(&mut Load { values }))
}

/// A half's gradients in module order, with which parameters have one.
struct CollectGradients {
    gradients: GradientsParams,
    present: Vec<bool>,
    values: Vec<f32>,
}

impl ModuleVisitor for CollectGradients {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let gradient = self.gradients.remove::<D>(param.id);
        self.present.push(gradient.is_some());
        if let Some(gradient) = gradient {
            self.values.extend(floats(gradient.flatten::<1>(0, D - 1)));
        }
    }
}

/// Gradients in module order registered by the ids of the worker's parameters.
struct RegisterGradients<'a, P: Iterator<Item = &'a bool>> {
    present: P,
    values: &'a [f32],
    device: &'a Device,
    gradients: GradientsParams,
    error: Option<HalfJobError>,
}

impl<'a, P: Iterator<Item = &'a bool>> ModuleVisitor for RegisterGradients<'a, P> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if self.error.is_some() {
            return;
        }
        match self.present.next() {
            Some(true) => {}
            Some(false) => return,
            None => {
                self.error = Some(HalfJobError::Damaged(
                    "fewer parameters than the model's".into(),
                ));
                return;
            }
        }
        let shape = param.shape();
        let len = shape.num_elements();
        if self.values.len() < len {
            self.error = Some(HalfJobError::Damaged(
                "fewer gradient values than the model's".into(),
            ));
            return;
        }
        let (own, rest) = self.values.split_at(len);
        self.values = rest;
        let data = TensorData::new(own.to_vec(), shape);
        self.gradients
            .register(param.id, Tensor::<D>::from_data(data, self.device));
    }
}

/// A CPU tensor's values (read at once: on the CPU a read is ready as it is asked for).
fn floats<const D: usize>(tensor: Tensor<D>) -> Vec<f32> {
    tensor
        .into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .expect("a float tensor converts to f32")
}

fn ints<const D: usize>(tensor: Tensor<D, Int>) -> Vec<i64> {
    tensor
        .into_data()
        .convert::<i64>()
        .try_into_vec::<i64>()
        .expect("an int tensor converts to i64")
}

/// Someone who computes a step's second half elsewhere (the browser's helper worker).
pub trait HalfHelper {
    /// Whether a job handed over now would be taken.
    fn is_ready(&self) -> bool;

    /// Hands `job` over at once; the future gives the half's outcome, or why there is none
    /// (the worker then computes the half itself).
    fn hand_over(&self, job: HalfJob) -> impl Future<Output = Result<HalfDone, HalfJobError>>;

    /// The helper's outcome could not be used (`error` says why): it gets no more jobs.
    fn give_up(&self, error: HalfJobError);
}
