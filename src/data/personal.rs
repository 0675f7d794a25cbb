//! A person's own digits with their labels (the lab's "teach it your handwriting"), kept and
//! exchanged as MNIST's own files: the images as IDX3 and the labels as IDX1, each
//! gzip-compressed, so that a set opens in any MNIST tool. Reading is bounded before anything
//! of a file's claimed size is allocated: a hostile or broken pair is refused with a reason.

use std::fmt;
use std::io::{Read, Write};

use super::{IMAGE_PIXELS, IMAGE_SIDE, MnistSet};

/// The most digits a personal set holds: a person draws tens, not thousands.
pub const MAX_PERSONAL_DIGITS: usize = 10_000;

/// The names a set is saved under, in MNIST's own pattern: the page's export, and what
/// `vit eval --personal DIR` and `vit train --extra DIR` read in `DIR`.
pub const PERSONAL_IMAGES_FILE: &str = "personal-images-idx3-ubyte.gz";
pub const PERSONAL_LABELS_FILE: &str = "personal-labels-idx1-ubyte.gz";

/// The largest gzip file read for a set: a full set's IDX bytes and room for gzip's overhead
/// on bytes that do not compress (a few bytes per 16 kB block, and its header).
pub const MAX_PERSONAL_FILE_BYTES: u64 =
    (IMAGES_HEADER + MAX_PERSONAL_DIGITS * IMAGE_PIXELS) as u64 * 2 + 1024;

const IMAGES_MAGIC: u32 = 0x0803;
const LABELS_MAGIC: u32 = 0x0801;
const IMAGES_HEADER: usize = 16;
const LABELS_HEADER: usize = 8;

/// A person's digits (28×28 grey levels, the model's input) and what each really is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PersonalSet {
    pub images: Vec<[u8; IMAGE_PIXELS]>,
    pub labels: Vec<u8>,
}

/// Which of the two files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdxFile {
    Images,
    Labels,
}

impl fmt::Display for IdxFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Images => "images",
            Self::Labels => "labels",
        })
    }
}

/// Why a pair of files is not a personal set.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PersonalSetError {
    #[error("the {0} file is not gzip-compressed: {1}")]
    Gzip(IdxFile, String),
    #[error("the {file} file is not MNIST's IDX {file} file (it starts {magic:#010x})")]
    Magic { file: IdxFile, magic: u32 },
    #[error("the images are {rows}×{cols} pixels, not 28×28")]
    Size { rows: u32, cols: u32 },
    #[error(
        "the {file} file holds {count} digits; a personal set holds at most {MAX_PERSONAL_DIGITS}"
    )]
    TooMany { file: IdxFile, count: u64 },
    #[error("{images} images but {labels} labels")]
    Lengths { images: usize, labels: usize },
    #[error("the {0} file is shorter than its header says")]
    Truncated(IdxFile),
    #[error("the {0} file goes on past its last digit")]
    Trailing(IdxFile),
    #[error("digit {index} is labelled {label}, not 0 to 9")]
    Label { index: usize, label: u8 },
}

impl PersonalSet {
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Fold `fold` of `folds`, to score a fine-tuning on the set: digit `index` is held out of
    /// training where `index % folds == fold` (each digit by exactly one fold), to be scored
    /// before and after; `(trained, held out)`. Everything is trained on for `folds` below 2.
    pub fn fold(&self, folds: usize, fold: usize) -> (PersonalSet, PersonalSet) {
        let mut trained = PersonalSet::default();
        let mut held_out = PersonalSet::default();
        for (index, (image, &label)) in self.images.iter().zip(&self.labels).enumerate() {
            let part = match folds >= 2 && index % folds == fold {
                true => &mut held_out,
                false => &mut trained,
            };
            part.images.push(*image);
            part.labels.push(label);
        }
        (trained, held_out)
    }

    /// The set as the training and evaluation code reads MNIST.
    pub fn to_set(&self) -> MnistSet {
        MnistSet {
            images: self.images.concat(),
            labels: self.labels.clone(),
        }
    }

    /// The set as MNIST's two files, each gzip-compressed: `(images, labels)`. The same set
    /// always gives the same bytes (no time stamp in the gzip header).
    pub fn to_idx_gz(&self) -> (Vec<u8>, Vec<u8>) {
        let count = |items: usize| u32::try_from(items).unwrap_or(u32::MAX);
        let side = IMAGE_SIDE as u32;
        let mut images = Vec::with_capacity(IMAGES_HEADER + self.images.len() * IMAGE_PIXELS);
        for field in [IMAGES_MAGIC, count(self.images.len()), side, side] {
            images.extend_from_slice(&field.to_be_bytes());
        }
        for image in &self.images {
            images.extend_from_slice(image);
        }
        let mut labels = Vec::with_capacity(LABELS_HEADER + self.labels.len());
        for field in [LABELS_MAGIC, count(self.labels.len())] {
            labels.extend_from_slice(&field.to_be_bytes());
        }
        labels.extend_from_slice(&self.labels);
        (gzip(&images), gzip(&labels))
    }

    /// Reads MNIST's two gzip-compressed IDX files (`images`, `labels`), refusing anything
    /// else, more than [`MAX_PERSONAL_DIGITS`] digits, or labels outside 0–9.
    pub fn from_idx_gz(images: &[u8], labels: &[u8]) -> Result<Self, PersonalSetError> {
        let pixels = IMAGES_HEADER + MAX_PERSONAL_DIGITS * IMAGE_PIXELS;
        let images = gunzip(images, IdxFile::Images, pixels)?;
        let labels = gunzip(labels, IdxFile::Labels, LABELS_HEADER + MAX_PERSONAL_DIGITS)?;
        let image_count = counted(&images, IdxFile::Images, IMAGES_MAGIC)?;
        let label_count = counted(&labels, IdxFile::Labels, LABELS_MAGIC)?;
        let (rows, cols) = (be_u32(&images, 8), be_u32(&images, 12));
        match (rows, cols) {
            (Some(rows), Some(cols)) if (rows, cols) != (IMAGE_SIDE as u32, IMAGE_SIDE as u32) => {
                return Err(PersonalSetError::Size { rows, cols });
            }
            (Some(_), Some(_)) => {}
            _ => return Err(PersonalSetError::Truncated(IdxFile::Images)),
        }
        if image_count != label_count {
            return Err(PersonalSetError::Lengths {
                images: image_count,
                labels: label_count,
            });
        }
        // Counts at most MAX_PERSONAL_DIGITS: these products cannot overflow, even on 32 bits.
        let pixels = exact(
            &images,
            IMAGES_HEADER,
            image_count * IMAGE_PIXELS,
            IdxFile::Images,
        )?;
        let labels = exact(&labels, LABELS_HEADER, label_count, IdxFile::Labels)?;
        if let Some((index, &label)) = labels.iter().enumerate().find(|(_, l)| **l > 9) {
            return Err(PersonalSetError::Label { index, label });
        }
        Ok(Self {
            images: pixels
                .chunks_exact(IMAGE_PIXELS)
                .map(|image| image.try_into().expect("IMAGE_PIXELS bytes"))
                .collect(),
            labels: labels.to_vec(),
        })
    }
}

impl PersonalSet {
    /// [`Self::from_idx_gz`] of two files in either order, told apart by what they hold: a
    /// person picks both files at once and the browser gives them in no set order.
    pub fn from_either_idx_gz(first: &[u8], second: &[u8]) -> Result<Self, PersonalSetError> {
        let swapped = || Self::from_idx_gz(second, first);
        match Self::from_idx_gz(first, second) {
            // The labels file came first: its magic says so.
            Err(PersonalSetError::Magic {
                file: IdxFile::Images,
                magic: LABELS_MAGIC,
            }) => swapped(),
            // The first is not gzip: named as the labels file if the second is the images.
            Err(error @ PersonalSetError::Gzip(IdxFile::Images, _)) => match swapped() {
                Err(named @ PersonalSetError::Gzip(IdxFile::Labels, _)) => Err(named),
                _ => Err(error),
            },
            read => read,
        }
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::best());
    // Writing into a Vec does not fail.
    encoder.write_all(bytes).expect("writes into memory");
    encoder.finish().expect("writes into memory")
}

/// `bytes` inflated, but never more than `limit` bytes and one: enough for the checks after
/// to tell a file longer than any set (a gzip bomb) from one that fits.
fn gunzip(bytes: &[u8], file: IdxFile, limit: usize) -> Result<Vec<u8>, PersonalSetError> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|error| PersonalSetError::Gzip(file, error.to_string()))?;
    Ok(out)
}

fn be_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let field = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes(field.try_into().ok()?))
}

/// The digit count in an IDX header whose magic is `magic`, at most [`MAX_PERSONAL_DIGITS`].
fn counted(bytes: &[u8], file: IdxFile, magic: u32) -> Result<usize, PersonalSetError> {
    let found = be_u32(bytes, 0).ok_or(PersonalSetError::Truncated(file))?;
    if found != magic {
        return Err(PersonalSetError::Magic { file, magic: found });
    }
    let count = be_u32(bytes, 4).ok_or(PersonalSetError::Truncated(file))?;
    match usize::try_from(count) {
        Ok(count) if count <= MAX_PERSONAL_DIGITS => Ok(count),
        _ => Err(PersonalSetError::TooMany {
            file,
            count: u64::from(count),
        }),
    }
}

/// The `length` bytes after a `header`, which must be all there is.
fn exact(
    bytes: &[u8],
    header: usize,
    length: usize,
    file: IdxFile,
) -> Result<&[u8], PersonalSetError> {
    let body = bytes.get(header..).unwrap_or_default();
    match body.len().cmp(&length) {
        std::cmp::Ordering::Less => Err(PersonalSetError::Truncated(file)),
        std::cmp::Ordering::Greater => Err(PersonalSetError::Trailing(file)),
        std::cmp::Ordering::Equal => Ok(body),
    }
}
