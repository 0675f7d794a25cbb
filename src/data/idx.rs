//! The original MNIST files (IDX, gzip-compressed), read natively to make the chunks.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{IMAGE_PIXELS, IMAGE_SIDE, MnistSet, Split};

const IMAGES_MAGIC: u32 = 2051;
const LABELS_MAGIC: u32 = 2049;

fn file_names(split: Split) -> (&'static str, &'static str) {
    match split {
        Split::Train => ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
        Split::Test => ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
    }
}

/// What is wrong with a pair of IDX files.
#[derive(Debug, thiserror::Error)]
pub enum IdxError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{images}/{labels}: not IDX image/label files")]
    NotIdx {
        images: &'static str,
        labels: &'static str,
    },
    #[error("{0}: the IDX header is truncated")]
    ShortHeader(&'static str),
    #[error("{name}: images are {rows}×{cols}, not 28×28")]
    Size {
        name: &'static str,
        rows: usize,
        cols: usize,
    },
    #[error("{images} and {labels} differ in length")]
    Lengths {
        images: &'static str,
        labels: &'static str,
    },
    #[error("{0} is truncated")]
    Truncated(&'static str),
    #[error("{0} has a label above 9")]
    Label(&'static str),
}

/// Reads `NAME.gz` or, failing that, `NAME` from `dir`.
fn read_maybe_gzipped(dir: &Path, name: &str) -> Result<Vec<u8>, IdxError> {
    let gz = dir.join(format!("{name}.gz"));
    let plain = dir.join(name);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| IdxError::Io { path, source }
    };
    if gz.exists() {
        let file = std::fs::File::open(&gz).map_err(io(&gz))?;
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(file)
            .read_to_end(&mut bytes)
            .map_err(io(&gz))?;
        Ok(bytes)
    } else {
        std::fs::read(&plain).map_err(io(&plain))
    }
}

fn be_u32(bytes: &[u8], at: usize, name: &'static str) -> Result<u32, IdxError> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")))
        .ok_or(IdxError::ShortHeader(name))
}

/// Parses one split from the IDX files in `dir`.
pub fn read_split(dir: &Path, split: Split) -> Result<MnistSet, IdxError> {
    let (images_name, labels_name) = file_names(split);
    let images = read_maybe_gzipped(dir, images_name)?;
    let labels = read_maybe_gzipped(dir, labels_name)?;
    let (image_u32, label_u32) = (
        |at| be_u32(&images, at, images_name),
        |at| be_u32(&labels, at, labels_name),
    );
    if image_u32(0)? != IMAGES_MAGIC || label_u32(0)? != LABELS_MAGIC {
        return Err(IdxError::NotIdx {
            images: images_name,
            labels: labels_name,
        });
    }
    let count = image_u32(4)? as usize;
    let (rows, cols) = (image_u32(8)? as usize, image_u32(12)? as usize);
    if (rows, cols) != (IMAGE_SIDE, IMAGE_SIDE) {
        return Err(IdxError::Size {
            name: images_name,
            rows,
            cols,
        });
    }
    if label_u32(4)? as usize != count {
        return Err(IdxError::Lengths {
            images: images_name,
            labels: labels_name,
        });
    }
    // A count from the file: checked, so a huge one is "truncated" rather than a wrap.
    let image_end = count
        .checked_mul(IMAGE_PIXELS)
        .and_then(|bytes| bytes.checked_add(16));
    let images = image_end
        .and_then(|end| images.get(16..end))
        .ok_or(IdxError::Truncated(images_name))?
        .to_vec();
    let labels = labels
        .get(8..count.saturating_add(8))
        .ok_or(IdxError::Truncated(labels_name))?
        .to_vec();
    if labels.iter().any(|&label| label > 9) {
        return Err(IdxError::Label(labels_name));
    }
    Ok(MnistSet { images, labels })
}
