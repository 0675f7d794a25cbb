//! What is wrong with a weights file, in words a person can act on, and kept short whatever
//! the file holds.

use crate::model::CostError;

/// What is wrong with a weights file, in words a person can act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WeightsError {
    #[error("the file is too short to be safetensors ({0} bytes)")]
    TooShort(usize),
    #[error("the file is not valid gzip: {0}")]
    Gzip(String),
    #[error("the file inflates past the {} MB a weights file may take", .limit >> 20)]
    InflatesPast { limit: usize },
    #[error("the header claims {claimed} bytes but the file has only {available} after it")]
    TruncatedHeader { claimed: u64, available: usize },
    #[error("the header claims {claimed} bytes, more than the {max} a header may take")]
    HeaderTooLarge { claimed: u64, max: u64 },
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
pub(crate) fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// A name or shape taken from a file, cut to [`SHOWN_CHARS`].
pub(crate) fn shown(text: &str) -> String {
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
