//! Weights as safetensors, named and laid out exactly like the seed's PyTorch `state_dict`.
//!
//! Burn keeps a linear layer's weight as `[in, out]` and names LayerNorm's parameters
//! `gamma`/`beta`; PyTorch has `[out, in]` and `weight`/`bias`, and the seed's MLP lives in an
//! `nn.Sequential` (`mlp.0`, `mlp.3`). [`torch_name`] and the transpose of every 2-D tensor are
//! the whole translation. The model config travels in the file's metadata.

use std::collections::HashMap;

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::tensor::{Device, Tensor, TensorData};
use serde::{Deserialize, Serialize};

use crate::data::{IMAGE_SIDE, NUM_CLASSES};
use crate::model::{Budget, CostError, VisionTransformer, VitConfig};

/// Metadata key holding the [`VitConfig`] as JSON.
pub const CONFIG_KEY: &str = "vitlab.config";
const MAX_HEADER_BYTES: u64 = 16 * 1024 * 1024;

/// What is wrong with a weights file, in words a person can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WeightsError {
    #[error("the file is too short to be safetensors ({0} bytes)")]
    TooShort(usize),
    #[error("the header claims {claimed} bytes but the file has only {available} after it")]
    TruncatedHeader { claimed: u64, available: usize },
    #[error("the header is not valid safetensors JSON: {0}")]
    Header(String),
    #[error("the model config in the metadata is invalid: {0}")]
    Config(String),
    #[error("the model is too costly to load: {0}")]
    Cost(#[from] CostError),
    #[error("tensor `{name}` is {dtype}; only F32 is supported")]
    Dtype { name: String, dtype: String },
    #[error(
        "tensor `{name}` needs bytes {begin}..{end} but the data section has {available} (truncated or corrupt file)"
    )]
    DataOutOfRange {
        name: String,
        begin: usize,
        end: usize,
        available: usize,
    },
    #[error("tensor `{name}` holds {bytes} bytes, which does not match its shape {shape:?}")]
    SizeMismatch {
        name: String,
        shape: Vec<usize>,
        bytes: usize,
    },
    #[error("the data section breaks the format: {0}")]
    Layout(String),
    #[error("tensor `{0}` contains NaN or infinite values")]
    NonFinite(String),
    #[error(
        "the model is for {image_size}×{image_size} images with {channels} channel(s) and {classes} classes; this app reads 28×28 grey MNIST digits into 10 classes"
    )]
    NotMnist {
        image_size: usize,
        channels: usize,
        classes: usize,
    },
    #[error("the tensors do not match the model: {0}")]
    Mismatch(Mismatch),
}

/// How a file's tensors differ from what the model needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mismatch {
    pub missing: Vec<String>,
    pub unexpected: Vec<String>,
    /// `(name, expected shape, shape in the file)`
    pub misshaped: Vec<(String, Vec<usize>, Vec<usize>)>,
}

/// Names shown of each kind of problem before "and N more": a message stays readable
/// whatever a file holds.
const SHOWN_PROBLEMS: usize = 5;
/// Characters shown of a name or shape taken from a file.
const SHOWN_CHARS: usize = 60;

/// `text` cut to `chars` characters, marked where cut.
fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// A name or shape taken from a file, cut to [`SHOWN_CHARS`].
fn shown(text: &str) -> String {
    cut(text, SHOWN_CHARS)
}

/// A parser's message about a file, cut to a readable length (serde quotes the values it
/// could not read, which a hostile file makes megabytes long).
pub fn brief(error: &impl std::fmt::Display) -> String {
    cut(&error.to_string(), 4 * SHOWN_CHARS)
}

/// The first few items, then how many more.
fn list(items: impl ExactSizeIterator<Item = String>) -> String {
    let total = items.len();
    let mut text: Vec<String> = items.take(SHOWN_PROBLEMS).collect();
    if total > SHOWN_PROBLEMS {
        text.push(format!("and {} more", total - SHOWN_PROBLEMS));
    }
    text.join(", ")
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if !self.missing.is_empty() {
            parts.push(format!(
                "missing {}",
                list(self.missing.iter().map(|name| shown(name)))
            ));
        }
        if !self.unexpected.is_empty() {
            parts.push(format!(
                "unexpected {}",
                list(self.unexpected.iter().map(|name| shown(name)))
            ));
        }
        if !self.misshaped.is_empty() {
            parts.push(list(self.misshaped.iter().map(
                |(name, expected, found)| {
                    format!(
                        "{} is {}, expected {expected:?}",
                        shown(name),
                        shown(&format!("{found:?}"))
                    )
                },
            )));
        }
        f.write_str(&parts.join("; "))
    }
}

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
    pub config: VitConfig,
    pub tensors: Vec<NamedTensor>,
}

/// The seed's name for the parameter at a Burn module path.
pub fn torch_name(path: &[String]) -> String {
    path.iter()
        .map(|segment| match segment.as_str() {
            "gamma" => "weight",
            "beta" => "bias",
            "mlp_in" => "mlp.0",
            "mlp_out" => "mlp.3",
            other => other,
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The names and PyTorch shapes a model of this config has, in module order.
pub fn expected_tensors(config: &VitConfig) -> Vec<(String, Vec<usize>)> {
    // Linear and LayerNorm parameters initialise lazily, so the model is cheap to build for its
    // shapes: only the position embedding and class token are drawn.
    let model = config.init(&Device::flex());
    let mut lister = ParamLister::default();
    model.visit(&mut lister);
    lister.entries
}

#[derive(Default)]
struct PathStack(Vec<String>);

impl PathStack {
    fn enter(&mut self, name: &str) {
        self.0.push(name.to_string());
    }
    fn exit(&mut self) {
        self.0.pop();
    }
    fn torch_name(&self) -> String {
        torch_name(&self.0)
    }
}

/// PyTorch's layout of a Burn parameter's shape: linear weights are transposed.
fn torch_shape(dims: &[usize]) -> Vec<usize> {
    match dims {
        [input, output] => vec![*output, *input],
        other => other.to_vec(),
    }
}

#[derive(Default)]
struct ParamLister {
    path: PathStack,
    entries: Vec<(String, Vec<usize>)>,
}

impl ModuleVisitor for ParamLister {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.enter(name);
    }
    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.exit();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let dims = param.lazy_shape().dims::<D>();
        self.entries
            .push((self.path.torch_name(), torch_shape(&dims)));
    }
}

/// Each parameter in PyTorch layout, flattened, still on its device.
struct ParamCollector {
    path: PathStack,
    entries: Vec<(String, Vec<usize>, Tensor<1>)>,
}

impl ModuleVisitor for ParamCollector {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.enter(name);
    }
    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.exit();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let mut tensor = param.val();
        if D == 2 {
            tensor = tensor.transpose();
        }
        let shape = tensor.dims().to_vec();
        let flat = tensor.reshape([shape.iter().product::<usize>()]);
        self.entries.push((self.path.torch_name(), shape, flat));
    }
}

fn collect(model: &VisionTransformer) -> Vec<(String, Vec<usize>, Tensor<1>)> {
    let mut collector = ParamCollector {
        path: PathStack::default(),
        entries: Vec::new(),
    };
    model.visit(&mut collector);
    collector.entries
}

fn to_values(data: TensorData) -> Vec<f32> {
    data.convert::<f32>()
        .try_into_vec::<f32>()
        .expect("a float tensor converts to f32")
}

/// Serialises a model natively. In the browser use [`to_safetensors_async`].
#[cfg(not(target_arch = "wasm32"))]
pub fn to_safetensors(model: &VisionTransformer, config: &VitConfig) -> Vec<u8> {
    let (names, flat) = model_tensors(model);
    encode(config, &named(names, read_all(flat)))
}

/// Serialises a model without a synchronous read, as the browser requires; one readback.
pub async fn to_safetensors_async(
    model: &VisionTransformer,
    config: &VitConfig,
) -> Result<Vec<u8>, String> {
    let (names, flat) = model_tensors(model);
    Ok(encode(config, &named(names, read_all_async(flat).await?)))
}

/// Each parameter's name and PyTorch shape, and its values flattened in PyTorch's layout,
/// still on the device.
pub(crate) fn model_tensors(
    model: &VisionTransformer,
) -> (Vec<(String, Vec<usize>)>, Vec<Tensor<1>>) {
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
pub(crate) async fn read_all_async(tensors: Vec<Tensor<1>>) -> Result<Vec<Vec<f32>>, String> {
    let lengths: Vec<usize> = tensors.iter().map(|tensor| tensor.dims()[0]).collect();
    if tensors.is_empty() {
        return Ok(Vec::new());
    }
    let data = Tensor::cat(tensors, 0)
        .into_data_async()
        .await
        .map_err(|error| format!("reading the tensors from the device failed: {error:?}"))?;
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

#[derive(Serialize, Deserialize)]
struct TensorHeader {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [usize; 2],
}

/// Writes safetensors bytes: F32 little-endian, the config in `__metadata__`.
pub fn encode(config: &VitConfig, tensors: &[NamedTensor]) -> Vec<u8> {
    encode_with(config, &[], tensors)
}

/// [`encode`], with more `(key, value)` pairs in `__metadata__` (a checkpoint's run state).
pub fn encode_with(
    config: &VitConfig,
    extra: &[(&str, String)],
    tensors: &[NamedTensor],
) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut metadata = serde_json::Map::new();
    metadata.insert("format".into(), "pt".into());
    metadata.insert(
        CONFIG_KEY.into(),
        serde_json::to_string(config)
            .expect("a config serialises")
            .into(),
    );
    for (key, value) in extra {
        metadata.insert((*key).into(), value.clone().into());
    }
    header.insert("__metadata__".into(), metadata.into());
    let mut offset = 0;
    for tensor in tensors {
        let end = offset + tensor.values.len() * 4;
        let entry = TensorHeader {
            dtype: "F32".into(),
            shape: tensor.shape.clone(),
            data_offsets: [offset, end],
        };
        header.insert(
            tensor.name.clone(),
            serde_json::to_value(entry).expect("a header entry serialises"),
        );
        offset = end;
    }
    let mut header = serde_json::to_vec(&header).expect("a header serialises");
    // The reference implementation aligns the data section to 8 bytes with spaces.
    while !header.len().is_multiple_of(8) {
        header.push(b' ');
    }
    let mut bytes = Vec::with_capacity(8 + header.len() + offset);
    bytes.extend_from_slice(&(header.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&header);
    for tensor in tensors {
        for value in &tensor.values {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
    }
    bytes
}

/// Parses safetensors bytes and checks them against the config they carry (the seed
/// preset when they carry none): every name, shape, byte range and value, and the model's
/// cost against the page's budget. [`decode_within`] takes another budget.
pub fn decode(bytes: &[u8]) -> Result<WeightsFile, WeightsError> {
    decode_within(bytes, &Budget::PAGE)
}

/// [`decode`], with the model held to `budget` before anything of its size is built.
pub fn decode_within(bytes: &[u8], budget: &Budget) -> Result<WeightsFile, WeightsError> {
    let checked = decode_checked(bytes, budget, |_, _| Ok(Vec::new()))?;
    Ok(WeightsFile {
        config: checked.config,
        tensors: checked.tensors,
    })
}

/// A safetensors file whose every tensor is one its config expects, or one `extra` expects
/// beyond the model's (a checkpoint's optimiser moments).
pub(crate) struct CheckedFile {
    pub config: VitConfig,
    /// Read by checkpoints (the `train` feature).
    #[cfg_attr(not(feature = "train"), allow(dead_code))]
    pub metadata: HashMap<String, String>,
    /// The model's tensors in module order, then `extra`'s in its order.
    pub tensors: Vec<NamedTensor>,
}

/// Parses and checks as [`decode_within`] does; `extra` names the tensors beyond the model's
/// that the file must hold, from its config and metadata.
pub(crate) fn decode_checked(
    bytes: &[u8],
    budget: &Budget,
    extra: impl FnOnce(
        &VitConfig,
        &HashMap<String, String>,
    ) -> Result<Vec<(String, Vec<usize>)>, WeightsError>,
) -> Result<CheckedFile, WeightsError> {
    if bytes.len() < 8 {
        return Err(WeightsError::TooShort(bytes.len()));
    }
    let header_len = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    let rest = &bytes[8..];
    if header_len > MAX_HEADER_BYTES || header_len as usize > rest.len() {
        return Err(WeightsError::TruncatedHeader {
            claimed: header_len,
            available: rest.len(),
        });
    }
    let (header, data) = rest.split_at(header_len as usize);
    // The format's rules: the JSON object starts the header and only spaces pad it.
    if header.first() != Some(&b'{') {
        return Err(WeightsError::Header(
            "the header does not start with `{` (an offset header length?)".into(),
        ));
    }
    let header: Entries = serde_json::from_slice(header.trim_ascii_end())
        .map_err(|error| WeightsError::Header(brief(&error)))?;
    if let Some(name) = header.duplicate() {
        return Err(WeightsError::Header(format!(
            "`{}` is named twice",
            shown(name)
        )));
    }

    let mut config = VitConfig::seed();
    let mut metadata: HashMap<String, String> = HashMap::new();
    let mut entries = HashMap::new();
    for (name, value) in header.0 {
        if name == "__metadata__" {
            metadata = serde_json::from_value(value).map_err(|error| {
                WeightsError::Header(format!("__metadata__: {}", brief(&error)))
            })?;
            if let Some(json) = metadata.get(CONFIG_KEY) {
                config = serde_json::from_str(json)
                    .map_err(|error| WeightsError::Config(brief(&error)))?;
            }
        } else {
            let entry: TensorHeader = serde_json::from_value(value).map_err(|error| {
                WeightsError::Header(format!("`{}`: {}", shown(&name), brief(&error)))
            })?;
            entries.insert(name, entry);
        }
    }
    config
        .validate()
        .map_err(|error| WeightsError::Config(error.to_string()))?;
    // Anything else would fail later, inside a forward pass or when reading 10 probabilities.
    if (config.image_size, config.channels, config.num_classes) != (IMAGE_SIDE, 1, NUM_CLASSES) {
        return Err(WeightsError::NotMnist {
            image_size: config.image_size,
            channels: config.channels,
            classes: config.num_classes,
        });
    }
    config.check_budget(budget, None)?;

    let mut expected = expected_tensors(&config);
    expected.extend(extra(&config, &metadata)?);
    let mut mismatch = Mismatch::default();
    for (name, shape) in &expected {
        match entries.get(name) {
            None => mismatch.missing.push(name.clone()),
            Some(entry) if &entry.shape != shape => {
                mismatch
                    .misshaped
                    .push((name.clone(), shape.clone(), entry.shape.clone()))
            }
            Some(_) => {}
        }
    }
    let mut unexpected: Vec<_> = entries
        .keys()
        .filter(|name| !expected.iter().any(|(known, _)| known == *name))
        .cloned()
        .collect();
    unexpected.sort();
    mismatch.unexpected = unexpected;
    if mismatch != Mismatch::default() {
        return Err(WeightsError::Mismatch(mismatch));
    }

    let mut tensors = Vec::with_capacity(expected.len());
    for (name, shape) in expected {
        let entry = &entries[&name];
        if entry.dtype != "F32" {
            return Err(WeightsError::Dtype {
                name,
                dtype: shown(&entry.dtype),
            });
        }
        let [begin, end] = entry.data_offsets;
        if begin > end || end > data.len() {
            return Err(WeightsError::DataOutOfRange {
                name,
                begin,
                end,
                available: data.len(),
            });
        }
        let raw = &data[begin..end];
        if raw.len() != shape.iter().product::<usize>() * 4 {
            return Err(WeightsError::SizeMismatch {
                name,
                shape,
                bytes: raw.len(),
            });
        }
        let values: Vec<f32> = raw
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if values.iter().any(|value| !value.is_finite()) {
            return Err(WeightsError::NonFinite(name));
        }
        tensors.push(NamedTensor {
            name,
            shape,
            values,
        });
    }
    check_layout(&entries, data.len())?;
    Ok(CheckedFile {
        config,
        metadata,
        tensors,
    })
}

/// The header's entries in the order written, duplicates kept (a map would keep one).
struct Entries(Vec<(String, serde_json::Value)>);

impl Entries {
    fn duplicate(&self) -> Option<&str> {
        let mut seen = std::collections::HashSet::new();
        self.0
            .iter()
            .map(|(name, _)| name.as_str())
            .find(|name| !seen.insert(*name))
    }
}

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object of tensors")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// The format's rules for the data section: the tensors' byte ranges, taken in order, start
/// at 0, follow one another with no gap or overlap, and end where the file ends.
fn check_layout(
    entries: &HashMap<String, TensorHeader>,
    available: usize,
) -> Result<(), WeightsError> {
    let mut ranges: Vec<(usize, usize, &str)> = entries
        .iter()
        .map(|(name, entry)| (entry.data_offsets[0], entry.data_offsets[1], name.as_str()))
        .collect();
    ranges.sort_unstable();
    let mut end = 0;
    for &(begin, next, name) in &ranges {
        if begin != end {
            return Err(WeightsError::Layout(format!(
                "tensor `{}` starts at byte {begin} of the data, not at {end} where the one before ends ({})",
                shown(name),
                if begin < end { "they overlap" } else { "a gap" }
            )));
        }
        end = next;
    }
    if end != available {
        return Err(WeightsError::Layout(format!(
            "the tensors end at byte {end} of the data but the file has {available} (trailing bytes)"
        )));
    }
    Ok(())
}

/// Replaces each parameter by the file's tensor of the same name, keeping its id and
/// whether it trains.
struct ParamLoader<'a> {
    path: PathStack,
    tensors: HashMap<&'a str, &'a NamedTensor>,
}

impl ModuleMapper for ParamLoader<'_> {
    fn enter_module(&mut self, name: &str, _container_type: &str) {
        self.path.enter(name);
    }
    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.exit();
    }
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let source = self.tensors[self.path.torch_name().as_str()];
        // Transposed here, on the host, so the parameter stays a leaf tensor.
        let data = match source.shape.as_slice() {
            &[rows, cols] => TensorData::new(transpose(&source.values, rows, cols), [cols, rows]),
            _ => TensorData::new(source.values.clone(), source.shape.clone()),
        };
        // `map` keeps the id and whether the parameter trains.
        param.map(|old| Tensor::from_data(data, &old.device()))
    }
}

/// A row-major `[rows, cols]` matrix as row-major `[cols, rows]`.
pub(crate) fn transpose(values: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0.0; values.len()];
    for row in 0..rows {
        for col in 0..cols {
            out[col * rows + row] = values[row * cols + col];
        }
    }
    out
}

impl WeightsFile {
    /// Builds the model on `device` with these weights; on an autodiff device it is ready
    /// to train.
    pub fn into_model(&self, device: &Device) -> VisionTransformer {
        let mut loader = ParamLoader {
            path: PathStack::default(),
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

/// The element-wise mean of weights files of one config, e.g. of the last epochs of a run
/// (stochastic weight averaging, Izmailov et al., UAI 2018). Sums in `f64`.
pub fn average(files: &[WeightsFile]) -> Result<WeightsFile, String> {
    let (first, rest) = files
        .split_first()
        .ok_or("there are no weights to average")?;
    for (index, other) in rest.iter().enumerate() {
        if other.config != first.config {
            return Err(format!(
                "file {} has another config than file 1: {:?} and {:?}",
                index + 2,
                other.config,
                first.config
            ));
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
                    .ok_or_else(|| {
                        format!(
                            "file {} has no tensor {} of shape {:?}",
                            index + 2,
                            tensor.name,
                            tensor.shape
                        )
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
        .collect::<Result<Vec<_>, String>>()?;
    Ok(WeightsFile {
        config: first.config.clone(),
        tensors,
    })
}

/// Parses and loads in one step.
pub fn load(bytes: &[u8], device: &Device) -> Result<(VisionTransformer, VitConfig), WeightsError> {
    let file = decode(bytes)?;
    let model = file.into_model(device);
    Ok((model, file.config))
}
