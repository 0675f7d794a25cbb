//! Heads switched off: a head's output (its slice of the heads' outputs side by side, before
//! the output projection) replaced by a constant, to see what the model loses without it
//! (Michel et al., NeurIPS 2019, "Are sixteen heads really better than one?"). The constant is
//! the head's mean output over a set of images, position by position (mean ablation: the rest
//! of the model still gets the input it is used to, only what the head says of this image is
//! gone), or zero (what Michel et al. do, which also shifts everything after it).
//!
//! The seed's PyTorch model does the same with a forward pre-hook on `attn.proj` that
//! overwrites those columns of its input (`tools/make_ablation_fixture.py`).

use burn::tensor::{Device, Tensor, TensorData};

use super::VitConfig;

/// What takes a switched-off head's output's place.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Replacement {
    /// Its mean over a set of images, at each token position ([`HeadMeans`]).
    #[default]
    Mean,
    Zero,
}

impl Replacement {
    /// As a link writes it.
    pub fn param(self) -> &'static str {
        match self {
            Self::Mean => "mean",
            Self::Zero => "zero",
        }
    }

    pub fn from_param(text: &str) -> Option<Self> {
        match text {
            "mean" => Some(Self::Mean),
            "zero" => Some(Self::Zero),
            _ => None,
        }
    }
}

/// The heads a person switched off, and what takes their place: what the page sends with
/// each drawing and a link keeps. Heads are `(layer, head)`, counted from 0, sorted, each
/// once.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "Vec<u16>", try_from = "Vec<u16>")]
pub struct HeadsOff {
    heads: Vec<(u16, u16)>,
    pub replacement: Replacement,
}

/// As a worker gets it: one list of numbers, `[replacement, layer, head, layer, head, …]`
/// (0 mean, 1 zero), which every worker decodes already (a struct of pairs took 5 kB more of
/// the worker binary, held to 3 MB).
impl From<HeadsOff> for Vec<u16> {
    fn from(off: HeadsOff) -> Self {
        let by = match off.replacement {
            Replacement::Mean => 0,
            Replacement::Zero => 1,
        };
        std::iter::once(by)
            .chain(off.heads.iter().flat_map(|&(l, h)| [l, h]))
            .collect()
    }
}

impl TryFrom<Vec<u16>> for HeadsOff {
    type Error = &'static str;

    fn try_from(flat: Vec<u16>) -> Result<Self, Self::Error> {
        let (by, pairs) = flat.split_first().ok_or("no replacement")?;
        let replacement = match by {
            0 => Replacement::Mean,
            1 => Replacement::Zero,
            _ => return Err("a replacement that is not 0 or 1"),
        };
        if pairs.len() % 2 != 0 {
            return Err("heads come in layer, head pairs");
        }
        let heads = pairs.chunks_exact(2).map(|pair| (pair[0], pair[1]));
        Ok(Self {
            heads: heads.collect(),
            replacement,
        })
    }
}

/// Heads a link may name: more than any model the page trains has.
const MAX_HEADS_OFF: usize = 1024;

impl HeadsOff {
    /// `heads` switched off by `replacement`; heads past `u16` are dropped, repeats kept once.
    pub fn new(heads: impl IntoIterator<Item = (usize, usize)>, replacement: Replacement) -> Self {
        let mut heads: Vec<(u16, u16)> = heads
            .into_iter()
            .filter_map(|(l, h)| Some((u16::try_from(l).ok()?, u16::try_from(h).ok()?)))
            .collect();
        heads.sort_unstable();
        heads.dedup();
        Self { heads, replacement }
    }

    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    pub fn contains(&self, layer: usize, head: usize) -> bool {
        self.heads().any(|(l, h)| (l, h) == (layer, head))
    }

    /// `(layer, head)`, counted from 0, in order.
    pub fn heads(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.heads
            .iter()
            .map(|&(l, h)| (usize::from(l), usize::from(h)))
    }

    /// The same with `(layer, head)` switched off if it was on, on if it was off.
    pub fn toggled(&self, layer: usize, head: usize) -> Self {
        let others = self.heads().filter(|&pair| pair != (layer, head));
        if self.contains(layer, head) {
            Self::new(others, self.replacement)
        } else {
            Self::new(others.chain([(layer, head)]), self.replacement)
        }
    }

    /// The heads as a link writes them: `layer.head`, counted from 1, comma-separated.
    pub fn to_param(&self) -> String {
        let heads: Vec<String> = self
            .heads()
            .map(|(l, h)| format!("{}.{}", l + 1, h + 1))
            .collect();
        heads.join(",")
    }

    /// [`Self::to_param`]'s heads read back, or why not.
    pub fn from_param(text: &str, replacement: Replacement) -> Result<Self, &'static str> {
        const WHY: &str = "not heads as `layer.head` counted from 1, comma-separated";
        let one = |pair: &str| -> Option<(usize, usize)> {
            let (layer, head) = pair.trim().split_once('.')?;
            let layer = layer.parse::<usize>().ok()?.checked_sub(1)?;
            let head = head.parse::<usize>().ok()?.checked_sub(1)?;
            (layer <= usize::from(u16::MAX) && head <= usize::from(u16::MAX))
                .then_some((layer, head))
        };
        if text.trim().is_empty() {
            return Ok(Self::new([], replacement));
        }
        let pairs: Vec<&str> = text.split(',').collect();
        if pairs.len() > MAX_HEADS_OFF {
            return Err("more heads than any model has");
        }
        let heads: Option<Vec<_>> = pairs.into_iter().map(one).collect();
        Ok(Self::new(heads.ok_or(WHY)?, replacement))
    }

    /// Only the heads a model of `config` has (a model of another shape has others).
    pub fn within(&self, config: &VitConfig) -> Self {
        let heads = self
            .heads()
            .filter(|&(l, h)| l < config.depth && h < config.heads);
        Self::new(heads, self.replacement)
    }

    /// Whether every head named is in a model of `config`.
    pub fn fits(&self, config: &VitConfig) -> bool {
        self.heads()
            .all(|(l, h)| l < config.depth && h < config.heads)
    }
}

/// Each layer's heads' outputs side by side, averaged over a set of images at each token
/// position: what [`Replacement::Mean`] puts in a head's place.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HeadMeans {
    /// Images averaged over.
    pub images: usize,
    /// Token positions (patches and the class token) and the model's width.
    pub tokens: usize,
    pub dim: usize,
    /// One `tokens × dim` row-major mean per layer, first layer first.
    pub layers: Vec<Vec<f32>>,
}

/// Heads switched off in one layer, ready to apply to its heads' outputs.
#[derive(Debug, Clone)]
pub struct LayerAblation {
    /// 1 over the columns of heads left on, 0 over those switched off.
    ///
    /// `[1, 1, dim]`
    keep: Tensor<3>,
    /// The switched-off heads' replacement in their columns, 0 elsewhere.
    ///
    /// `[1, tokens, dim]`, or `[1, 1, dim]` for [`Replacement::Zero`]
    replacement: Tensor<3>,
}

impl LayerAblation {
    /// `mixed` with the switched-off heads' columns replaced.
    ///
    /// # Shapes
    /// - mixed: `[batch, tokens, dim]`, the heads' outputs side by side
    /// - output: `[batch, tokens, dim]`
    pub fn apply(&self, mixed: Tensor<3>) -> Tensor<3> {
        mixed * self.keep.clone() + self.replacement.clone() // [B, N, D]
    }
}

/// Why heads could not be switched off as asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AblationError {
    #[error(
        "layer {}, head {} is not in a model of {depth} layers of {heads} heads",
        layer + 1,
        head + 1
    )]
    NoSuchHead {
        layer: usize,
        head: usize,
        depth: usize,
        heads: usize,
    },
    #[error("the heads' means are of another model ({found}, this one {expected})")]
    MeansOfAnotherModel { found: String, expected: String },
}

/// Heads switched off across the model, one entry per layer (`None`: all its heads on).
#[derive(Debug, Clone, Default)]
pub struct Ablation {
    pub layers: Vec<Option<LayerAblation>>,
}

impl Ablation {
    /// The heads `(layer, head)` of a model of `config`, counted from 0, switched off with
    /// `replacement` (`means` holds the model's [`HeadMeans`] for [`Replacement::Mean`]).
    pub fn new(
        config: &VitConfig,
        heads: &[(usize, usize)],
        replacement: Replacement,
        means: Option<&HeadMeans>,
        device: &Device,
    ) -> Result<Self, AblationError> {
        let (depth, count, dim) = (config.depth, config.heads, config.dim);
        let tokens = config.grid_size() * config.grid_size() + 1;
        if let Some(&(layer, head)) = heads.iter().find(|&&(l, h)| l >= depth || h >= count) {
            return Err(AblationError::NoSuchHead {
                layer,
                head,
                depth,
                heads: count,
            });
        }
        let means = match replacement {
            Replacement::Zero => None,
            Replacement::Mean => {
                let expected = format!("{depth} layers, {tokens} tokens of {dim}");
                let fits = |m: &&HeadMeans| {
                    m.tokens == tokens
                        && m.dim == dim
                        && m.layers.len() == depth
                        && m.layers.iter().all(|l| l.len() == tokens * dim)
                };
                Some(
                    means
                        .filter(fits)
                        .ok_or_else(|| AblationError::MeansOfAnotherModel {
                            found: means.map_or("none".into(), |m| {
                                format!(
                                    "{} layers, {} tokens of {}",
                                    m.layers.len(),
                                    m.tokens,
                                    m.dim
                                )
                            }),
                            expected,
                        })?,
                )
            }
        };
        let head_dim = dim / count.max(1);
        let layers = (0..depth)
            .map(|layer| {
                let off: Vec<usize> = heads
                    .iter()
                    .filter(|&&(l, _)| l == layer)
                    .map(|&(_, h)| h)
                    .collect();
                if off.is_empty() {
                    return None;
                }
                let switched_off = |column: usize| off.contains(&(column / head_dim));
                let keep: Vec<f32> = (0..dim)
                    .map(|c| if switched_off(c) { 0.0 } else { 1.0 })
                    .collect();
                let keep = Tensor::<1>::from_data(TensorData::new(keep, [dim]), device)
                    .reshape([1, 1, dim]); // [1, 1, D]
                let replacement = match means {
                    None => Tensor::zeros([1, 1, dim], device), // [1, 1, D]
                    Some(means) => {
                        let values: Vec<f32> = means.layers[layer]
                            .iter()
                            .enumerate()
                            .map(|(i, &v)| if switched_off(i % dim) { v } else { 0.0 })
                            .collect();
                        Tensor::<1>::from_data(TensorData::new(values, [tokens * dim]), device)
                            .reshape([1, tokens, dim]) // [1, N, D]
                    }
                };
                Some(LayerAblation { keep, replacement })
            })
            .collect();
        Ok(Self { layers })
    }

    /// The heads `off` names switched off in a model of `config`, as [`Self::new`].
    pub fn of(
        config: &VitConfig,
        off: &HeadsOff,
        means: Option<&HeadMeans>,
        device: &Device,
    ) -> Result<Self, AblationError> {
        let heads: Vec<(usize, usize)> = off.heads().collect();
        Self::new(config, &heads, off.replacement, means, device)
    }

    /// Layer `layer`'s heads switched off, if any.
    pub fn layer(&self, layer: usize) -> Option<&LayerAblation> {
        self.layers.get(layer).and_then(Option::as_ref)
    }
}
