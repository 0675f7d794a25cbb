//! Safetensors bytes, written and read: F32 little-endian, the config in `__metadata__`, and
//! every check a hostile file needs before anything of its size is built.
//!
//! Reading: the header is first checked entry by entry here, so that a bad file is named by
//! what is wrong (this tensor is missing, that one is F16, this one ends past the file);
//! then the `safetensors` crate parses the whole file, holds it to the format (the data
//! ranges follow one another from 0 to the end, each the size of its shape), and hands out
//! each tensor's bytes. Writing stays here: the crate writes `__metadata__` in hash-map
//! order, which changes from process to process, and the same weights must give the same
//! bytes (a test compares the command line's file with the page's, byte for byte).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::error::{Mismatch, WeightsError, brief, shown};
use super::{NamedTensor, WeightsFile, expected_tensors};
use crate::data::{IMAGE_SIDE, NUM_CLASSES};
use crate::model::{Budget, CnnConfig, FIRST_CONV_WEIGHT, ModelConfig, VitConfig};

/// Metadata key holding the [`ModelConfig`] as JSON.
pub const CONFIG_KEY: &str = "vitlab.config";
/// The largest header read. It is parsed straight into typed, bounded entries (never into a
/// JSON tree, which took hundreds of bytes per number of a hostile header): reading one this
/// size holds a few times its bytes at most (`tests/native/fuzz.rs` meters it).
pub const MAX_HEADER_BYTES: u64 = 16 * 1024 * 1024;
/// Entries a header may have: far more than the largest model the budgets allow has tensors
/// (with a checkpoint's two moments for each), few enough that their names and shapes stay
/// small beside the header itself.
pub const MAX_HEADER_ENTRIES: usize = 4096;
/// Dimensions a tensor's shape may have (the model's have at most 4).
const MAX_DIMS: usize = 8;
/// Keys `__metadata__` may have (the page writes three, PyTorch one).
const MAX_METADATA: usize = 64;

#[derive(Serialize, Deserialize)]
struct TensorHeader {
    dtype: String,
    #[serde(deserialize_with = "bounded_shape")]
    shape: Vec<usize>,
    data_offsets: [usize; 2],
}

/// A shape of at most [`MAX_DIMS`] dimensions, refused at the first one past them (before a
/// hostile shape of millions of dimensions is held).
fn bounded_shape<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<usize>, D::Error> {
    struct Shape;
    impl<'de> serde::de::Visitor<'de> for Shape {
        type Value = Vec<usize>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "a shape of at most {MAX_DIMS} dimensions")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Vec<usize>, A::Error> {
            let mut shape = Vec::new();
            while let Some(dim) = seq.next_element()? {
                if shape.len() == MAX_DIMS {
                    return Err(serde::de::Error::custom(format!(
                        "a shape of more than {MAX_DIMS} dimensions"
                    )));
                }
                shape.push(dim);
            }
            Ok(shape)
        }
    }
    deserializer.deserialize_seq(Shape)
}

/// Writes safetensors bytes: F32 little-endian, the config in `__metadata__`.
pub fn encode(config: &ModelConfig, tensors: &[NamedTensor]) -> Vec<u8> {
    encode_with(config, &[], tensors)
}

/// [`encode`], with more `(key, value)` pairs in `__metadata__` (a checkpoint's run state).
pub fn encode_with(
    config: &ModelConfig,
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

/// Parses safetensors bytes and checks them against the config they carry (when they carry
/// none, as a file saved by PyTorch: the seed CNN if its names are a CNN's, else the seed
/// ViT): every name, shape, byte range and value, and the model's
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
    pub config: ModelConfig,
    /// Read by checkpoints (the `train` feature).
    #[cfg_attr(not(feature = "train"), allow(dead_code))]
    pub metadata: HashMap<String, String>,
    /// The model's tensors in module order, then `extra`'s in its order.
    pub tensors: Vec<NamedTensor>,
}

/// Holds a safetensors file's header to this reader's bounds (its length, its entries, their
/// shapes and metadata), reading it into nothing larger than they allow: what a reader of
/// the whole format (the `safetensors` crate's, whose own bounds are far looser) may then
/// parse without holding hundreds of megabytes for a hostile header.
pub fn check_header_bounds(bytes: &[u8]) -> Result<(), WeightsError> {
    header_entries(bytes).map(drop)
}

/// The header's entries, bounded (see [`check_header_bounds`]), and the data after it.
fn header_entries(bytes: &[u8]) -> Result<(Entries, &[u8]), WeightsError> {
    if bytes.len() < 8 {
        return Err(WeightsError::TooShort(bytes.len()));
    }
    let header_len = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    let rest = &bytes[8..];
    if header_len > MAX_HEADER_BYTES {
        return Err(WeightsError::HeaderTooLarge {
            claimed: header_len,
            max: MAX_HEADER_BYTES,
        });
    }
    if header_len as usize > rest.len() {
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
    Ok((header, data))
}

/// Parses and checks as [`decode_within`] does; `extra` names the tensors beyond the model's
/// that the file must hold, from its config and metadata.
pub(crate) fn decode_checked(
    bytes: &[u8],
    budget: &Budget,
    extra: impl FnOnce(
        &ModelConfig,
        &HashMap<String, String>,
    ) -> Result<Vec<(String, Vec<usize>)>, WeightsError>,
) -> Result<CheckedFile, WeightsError> {
    let (header, data) = header_entries(bytes)?;
    if let Some(name) = header.duplicate() {
        return Err(WeightsError::Header(format!(
            "`{}` is named twice",
            shown(name)
        )));
    }

    let mut config = None;
    let mut metadata: HashMap<String, String> = HashMap::new();
    let mut entries = HashMap::new();
    for (name, entry) in header.0 {
        match entry {
            Entry::Metadata(read) => {
                metadata = read;
                if let Some(json) = metadata.get(CONFIG_KEY) {
                    config = Some(
                        serde_json::from_str::<ModelConfig>(json)
                            .map_err(|error| WeightsError::Config(brief(&error)))?,
                    );
                }
            }
            Entry::Tensor(tensor) => {
                entries.insert(name, tensor);
            }
        }
    }
    let config = config.unwrap_or_else(|| {
        if entries.contains_key(FIRST_CONV_WEIGHT) {
            CnnConfig::seed().into()
        } else {
            VitConfig::seed().into()
        }
    });
    config
        .validate()
        .map_err(|error| WeightsError::Config(error.to_string()))?;
    // Anything else would fail later, inside a forward pass or when reading 10 probabilities.
    let ((image_size, channels), classes) = (config.input(), config.num_classes());
    if (image_size, channels, classes) != (IMAGE_SIDE, 1, NUM_CLASSES) {
        return Err(WeightsError::NotMnist {
            image_size,
            channels,
            classes,
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

    for (name, shape) in &expected {
        let entry = &entries[name];
        if entry.dtype != "F32" {
            return Err(WeightsError::Dtype {
                name: name.clone(),
                dtype: shown(&entry.dtype),
            });
        }
        let [begin, end] = entry.data_offsets;
        if begin > end || end > data.len() {
            return Err(WeightsError::DataOutOfRange {
                name: name.clone(),
                begin,
                end,
                available: data.len(),
            });
        }
        // Bounded by the budget checked above, so the product cannot wrap.
        if end - begin != shape.iter().product::<usize>() * 4 {
            return Err(WeightsError::SizeMismatch {
                name: name.clone(),
                shape: shape.clone(),
                bytes: end - begin,
            });
        }
    }
    check_layout(&entries, data.len())?;
    // The format's own reader, over the checked header: what it refuses is a layout error.
    let file = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|error| WeightsError::Layout(brief(&error)))?;
    let mut tensors = Vec::with_capacity(expected.len());
    for (name, shape) in expected {
        let view = file
            .tensor(&name)
            .map_err(|error| WeightsError::Layout(brief(&error)))?;
        let values: Vec<f32> = view
            .data()
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
    Ok(CheckedFile {
        config,
        metadata,
        tensors,
    })
}

/// One entry of a header, typed as it is read.
enum Entry {
    /// `__metadata__`: strings only.
    Metadata(HashMap<String, String>),
    Tensor(TensorHeader),
}

/// `__metadata__`'s strings, at most [`MAX_METADATA`] of them.
struct Metadata(HashMap<String, String>);

impl<'de> Deserialize<'de> for Metadata {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Metadata;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "at most {MAX_METADATA} strings by name")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Metadata, A::Error> {
                let mut read = HashMap::new();
                while let Some((key, value)) = map.next_entry::<String, String>()? {
                    if read.len() == MAX_METADATA {
                        return Err(serde::de::Error::custom(format!(
                            "more than {MAX_METADATA} keys"
                        )));
                    }
                    read.insert(key, value);
                }
                Ok(Metadata(read))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// The header's entries in the order written, duplicates kept (a map would keep one), at most
/// [`MAX_HEADER_ENTRIES`]: each read straight into its type, a tensor's error named by it.
struct Entries(Vec<(String, Entry)>);

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
                use serde::de::Error;
                let mut entries = Vec::new();
                while let Some(name) = map.next_key::<String>()? {
                    if entries.len() == MAX_HEADER_ENTRIES {
                        return Err(A::Error::custom(format!(
                            "more than {MAX_HEADER_ENTRIES} entries"
                        )));
                    }
                    let entry = if name == "__metadata__" {
                        map.next_value::<Metadata>()
                            .map(|metadata| Entry::Metadata(metadata.0))
                            .map_err(|error| A::Error::custom(format!("__metadata__: {error}")))?
                    } else {
                        map.next_value().map(Entry::Tensor).map_err(|error| {
                            A::Error::custom(format!("`{}`: {error}", shown(&name)))
                        })?
                    };
                    entries.push((name, entry));
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
