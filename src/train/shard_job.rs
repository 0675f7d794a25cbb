//! Shards of a CPU step computed by someone else: what the browser's training worker hands a
//! helper worker (the parameters, the shards' images and labels, the step's dropout stream)
//! and what comes back (each shard's loss, correct count and gradients). Values are held flat,
//! in the model's parameter order, beside a small header, so that the workers' messages carry
//! them as bytes beside the header: copied once rather than written out as JSON.
//!
//! The helper runs [`shard_gradients`] on the same values the worker would have used, shard by
//! shard, and hands each shard's gradients back apart (the worker adds them in the shards'
//! order): its shards are the ones the worker would have computed itself, bit for bit, so
//! whether helpers took part, and how many, never shows in the weights.

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::tensor::{Device, Int, Tensor, TensorData};
use serde::{Deserialize, Serialize};

use super::cpu_workers::MAX_SHARDS;
use super::objective::{BatchGradients, Objective};
use super::shards::{Shard, shard_gradients};
use crate::data::Batch;
use crate::model::{Classifier, ModelConfig};

/// Why shards could not be computed or taken back: the workers disagree about the model or
/// the message was damaged. The worker then computes the shards itself.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShardJobError {
    #[error("{what}: {found} values where the model has {expected}")]
    WrongLength {
        what: &'static str,
        found: usize,
        expected: usize,
    },
    #[error(
        "the shards' images are {found:?} each, where the model takes [{channels}, {side}, {side}]"
    )]
    WrongImages {
        found: [usize; 3],
        channels: usize,
        side: usize,
    },
    #[error("a share of {share} of the batch, or a label smoothing of {smoothing}")]
    OutOfRange { share: f64, smoothing: f32 },
    #[error("{0:?} is not one of the shards a batch is cut into")]
    BadShard(Vec<Shard>),
    #[error("a label of {0} where the model has {1} classes")]
    BadLabel(i64, usize),
    #[error("{0}")]
    Damaged(String),
}

/// One shard in a job: which, its share of the batch, its labels (its images are as many).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardPart {
    pub shard: Shard,
    /// The shard's share of the batch's images: its loss is counted as that share of the mean.
    pub share: f64,
    pub labels: Vec<i64>,
}

/// What travels as JSON beside a job's bytes (the parameters, then the shards' images in the
/// order of `shards`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardJobHeader {
    /// The step's stream (`rng::step_seed`), from which each shard's dropout masks come.
    pub stream: u64,
    pub smoothing: f32,
    /// Number of parameter values at the front of the bytes.
    pub params: usize,
    /// `[channels, height, width]` of each image.
    pub image: [usize; 3],
    pub shards: Vec<ShardPart>,
}

/// Shards of a step, ready to hand over.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardJob {
    pub header: ShardJobHeader,
    /// Every parameter's values, flattened, in module order.
    pub params: Vec<f32>,
    /// The shards' images, one after the other, flattened.
    pub images: Vec<f32>,
}

/// One shard's outcome in a reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardDoneHeader {
    pub shard: Shard,
    /// The shard's share of the batch's mean loss.
    pub loss: f32,
    pub correct: i64,
    /// Per parameter in module order, whether it has a gradient (its values are in the bytes
    /// only if it has).
    pub present: Vec<bool>,
}

/// What travels as JSON beside a reply's bytes (each shard's gradients, in the order of
/// `shards`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardsDoneHeader {
    pub shards: Vec<ShardDoneHeader>,
}

/// A job's outcome, as the helper sends it back.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardsDone {
    pub header: ShardsDoneHeader,
    pub gradients: Vec<f32>,
}

impl ShardJob {
    /// `shards` of `batch` for a step of `model` with stream `stream`, whose parameters'
    /// values are `params` ([`parameter_values`] of `model`, read once for every job of the
    /// step). `batch` must be on the CPU (its values are read at once).
    pub fn of(
        params: Vec<f32>,
        batch: &Batch,
        objective: Objective<'_>,
        stream: u64,
        shards: &[Shard],
    ) -> Self {
        let [images, channels, height, width] = batch.images.dims();
        let mut parts = Vec::with_capacity(shards.len());
        let mut pixels = Vec::with_capacity(shards.len());
        for &shard in shards {
            let (start, len) = shard.range(images);
            let labels = batch.labels.clone().narrow(0, start, len); // [B/of]
            pixels.push(batch.images.clone().narrow(0, start, len)); // [B/of, C, H, W]
            parts.push(ShardPart {
                shard,
                share: len as f64 / images as f64,
                labels: ints(labels),
            });
        }
        let images = Tensor::cat(pixels, 0); // [n, C, H, W]
        Self {
            header: ShardJobHeader {
                stream,
                smoothing: objective.smoothing,
                params: params.len(),
                image: [channels, height, width],
                shards: parts,
            },
            params,
            images: floats(images.flatten::<1>(0, 3)),
        }
    }

    /// The images the job's shards hold in all; `None` past what can be counted.
    pub fn image_count(header: &ShardJobHeader) -> Option<usize> {
        header
            .shards
            .iter()
            .try_fold(0usize, |n, part| n.checked_add(part.labels.len()))
    }

    /// Runs the shards, one after the other, on `model` (the helper's copy of `config`'s
    /// model on the autodiff `device`: its values are replaced by the job's), the computation
    /// the worker would have run itself.
    pub fn run(
        self,
        model: Classifier,
        config: &ModelConfig,
        device: &Device,
    ) -> Result<ShardsDone, ShardJobError> {
        let header = self.header;
        let (side, channels) = config.input();
        if header.image != [channels, side, side] {
            return Err(ShardJobError::WrongImages {
                found: header.image,
                channels,
                side,
            });
        }
        let shards: Vec<Shard> = header.shards.iter().map(|part| part.shard).collect();
        let mut seen = [false; MAX_SHARDS];
        let distinct = shards
            .iter()
            .all(|shard| shard.is_valid() && !std::mem::replace(&mut seen[shard.index], true));
        let one_cut = shards.windows(2).all(|pair| pair[0].of == pair[1].of);
        let empty = header.shards.iter().any(|part| part.labels.is_empty());
        if shards.is_empty() || !distinct || !one_cut || empty {
            return Err(ShardJobError::BadShard(shards));
        }
        if !(0.0..1.0).contains(&header.smoothing) {
            return Err(ShardJobError::OutOfRange {
                share: 1.0,
                smoothing: header.smoothing,
            });
        }
        if let Some(part) = header
            .shards
            .iter()
            .find(|part| !(part.share > 0.0 && part.share <= 1.0))
        {
            return Err(ShardJobError::OutOfRange {
                share: part.share,
                smoothing: header.smoothing,
            });
        }
        let classes = config.num_classes();
        if let Some(&label) = header
            .shards
            .iter()
            .flat_map(|part| &part.labels)
            .find(|&&l| !usize::try_from(l).is_ok_and(|l| l < classes))
        {
            return Err(ShardJobError::BadLabel(label, classes));
        }
        let model = with_values(model, &self.params)?;
        let objective = Objective {
            smoothing: header.smoothing,
            teacher: None,
        };
        let per_image = channels * side * side;
        let mut rest = self.images.as_slice();
        let mut done = Vec::with_capacity(header.shards.len());
        let mut gradients = Vec::new();
        for part in header.shards {
            let n = part.labels.len();
            let Some((own, after)) = n
                .checked_mul(per_image)
                .and_then(|values| rest.split_at_checked(values))
            else {
                return Err(ShardJobError::Damaged(
                    "fewer image values than the shards' labels".into(),
                ));
            };
            rest = after;
            let data = TensorData::new(own.to_vec(), [n, channels, side, side]);
            let images = Tensor::<4>::from_data(data, device); // [n, C, H, W]
            let labels = Tensor::<1, Int>::from_data(TensorData::new(part.labels, [n]), device); // [n]
            let outcome = shard_gradients(
                &model,
                images,
                labels,
                objective,
                header.stream,
                part.shard,
                part.share,
            );
            let mut collect = CollectGradients {
                gradients: outcome.gradients,
                present: Vec::new(),
                values: &mut gradients,
            };
            model.visit(&mut collect);
            done.push(ShardDoneHeader {
                shard: part.shard,
                loss: floats(outcome.loss)[0],
                correct: ints(outcome.correct)[0],
                present: collect.present,
            });
        }
        if !rest.is_empty() {
            return Err(ShardJobError::Damaged(
                "more image values than the shards' labels".into(),
            ));
        }
        Ok(ShardsDone {
            header: ShardsDoneHeader { shards: done },
            gradients,
        })
    }
}

impl ShardsDone {
    /// Each shard as the worker's own [`shard_gradients`] would have given it, in the order of
    /// `asked` (the shards the job named), which the reply must hold exactly: the loss and
    /// count on the autodiff `device`, the gradients as tensors of `model`'s parameters (by
    /// their ids) on its inner side.
    pub fn into_batch_gradients(
        self,
        model: &Classifier,
        device: &Device,
        asked: &[Shard],
    ) -> Result<Vec<BatchGradients>, ShardJobError> {
        let answered: Vec<Shard> = self.header.shards.iter().map(|s| s.shard).collect();
        if answered != asked {
            return Err(ShardJobError::Damaged(format!(
                "it answered for shards {answered:?} where it was asked for {asked:?}"
            )));
        }
        let inner = device.clone().inner();
        let mut values = self.gradients.as_slice();
        let mut shards = Vec::with_capacity(asked.len());
        for done in self.header.shards {
            let mut register = RegisterGradients {
                present: done.present.into_iter(),
                values,
                device: &inner,
                gradients: GradientsParams::new(),
                error: None,
            };
            model.visit(&mut register);
            if let Some(error) = register.error {
                return Err(error);
            }
            if register.present.next().is_some() {
                return Err(ShardJobError::Damaged(
                    "it sent more gradients than the model has parameters".into(),
                ));
            }
            values = register.values;
            let loss = TensorData::new(vec![done.loss], [1]);
            let correct = TensorData::new(vec![done.correct], [1]);
            shards.push(BatchGradients {
                loss: Tensor::from_data(loss, device),
                correct: Tensor::from_data(correct, device),
                gradients: register.gradients,
            });
        }
        if !values.is_empty() {
            return Err(ShardJobError::Damaged(
                "it sent more gradients than the model has values".into(),
            ));
        }
        Ok(shards)
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
fn with_values(model: Classifier, values: &[f32]) -> Result<Classifier, ShardJobError> {
    let expected = model.num_params();
    if values.len() != expected {
        return Err(ShardJobError::WrongLength {
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

/// A shard's gradients in module order, appended to `values`, with which parameters have one.
struct CollectGradients<'a> {
    gradients: GradientsParams,
    present: Vec<bool>,
    values: &'a mut Vec<f32>,
}

impl ModuleVisitor for CollectGradients<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let gradient = self.gradients.remove::<D>(param.id);
        self.present.push(gradient.is_some());
        if let Some(gradient) = gradient {
            self.values.extend(floats(gradient.flatten::<1>(0, D - 1)));
        }
    }
}

/// Gradients in module order registered by the ids of the worker's parameters.
struct RegisterGradients<'a, P: Iterator<Item = bool>> {
    present: P,
    values: &'a [f32],
    device: &'a Device,
    gradients: GradientsParams,
    error: Option<ShardJobError>,
}

impl<P: Iterator<Item = bool>> ModuleVisitor for RegisterGradients<'_, P> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        if self.error.is_some() {
            return;
        }
        match self.present.next() {
            Some(true) => {}
            Some(false) => return,
            None => {
                self.error = Some(ShardJobError::Damaged(
                    "fewer parameters than the model's".into(),
                ));
                return;
            }
        }
        let shape = param.shape();
        let len = shape.num_elements();
        if self.values.len() < len {
            self.error = Some(ShardJobError::Damaged(
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

/// Someone who computes shards of a step elsewhere (one of the browser's helper workers).
pub trait ShardHelper {
    /// Whether a job handed over now would be taken.
    fn is_ready(&self) -> bool;

    /// Hands `job` over at once; the future gives the shards' outcome, or why there is none
    /// (the worker then computes them itself).
    fn hand_over(&self, job: ShardJob) -> impl Future<Output = Result<ShardsDone, ShardJobError>>;

    /// The helper's outcome could not be used (`error` says why): it gets no more jobs.
    fn give_up(&self, error: ShardJobError);
}
