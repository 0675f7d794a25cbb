//! The original MNIST files (IDX, gzip-compressed), read natively to make the chunks.

use std::io::Read;
use std::path::Path;

use super::{IMAGE_PIXELS, IMAGE_SIDE, MnistSet, Split};

const IMAGES_MAGIC: u32 = 2051;
const LABELS_MAGIC: u32 = 2049;

fn file_names(split: Split) -> (&'static str, &'static str) {
    match split {
        Split::Train => ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
        Split::Test => ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
    }
}

/// Reads `NAME.gz` or, failing that, `NAME` from `dir`.
fn read_maybe_gzipped(dir: &Path, name: &str) -> Result<Vec<u8>, String> {
    let gz = dir.join(format!("{name}.gz"));
    let plain = dir.join(name);
    if gz.exists() {
        let file = std::fs::File::open(&gz).map_err(|e| format!("{}: {e}", gz.display()))?;
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(file)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{}: {e}", gz.display()))?;
        Ok(bytes)
    } else {
        std::fs::read(&plain).map_err(|e| format!("{}: {e}", plain.display()))
    }
}

fn be_u32(bytes: &[u8], at: usize) -> Result<u32, String> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")))
        .ok_or_else(|| "IDX header is truncated".to_string())
}

/// Parses one split from the IDX files in `dir`.
pub fn read_split(dir: &Path, split: Split) -> Result<MnistSet, String> {
    let (images_name, labels_name) = file_names(split);
    let images = read_maybe_gzipped(dir, images_name)?;
    let labels = read_maybe_gzipped(dir, labels_name)?;
    if be_u32(&images, 0)? != IMAGES_MAGIC || be_u32(&labels, 0)? != LABELS_MAGIC {
        return Err(format!(
            "{images_name}/{labels_name}: not IDX image/label files"
        ));
    }
    let count = be_u32(&images, 4)? as usize;
    let (rows, cols) = (be_u32(&images, 8)? as usize, be_u32(&images, 12)? as usize);
    if (rows, cols) != (IMAGE_SIDE, IMAGE_SIDE) {
        return Err(format!(
            "{images_name}: images are {rows}×{cols}, not 28×28"
        ));
    }
    if be_u32(&labels, 4)? as usize != count {
        return Err(format!("{images_name} and {labels_name} differ in length"));
    }
    let images = images
        .get(16..16 + count * IMAGE_PIXELS)
        .ok_or_else(|| format!("{images_name} is truncated"))?
        .to_vec();
    let labels = labels
        .get(8..8 + count)
        .ok_or_else(|| format!("{labels_name} is truncated"))?
        .to_vec();
    if labels.iter().any(|&label| label > 9) {
        return Err(format!("{labels_name} has a label above 9"));
    }
    Ok(MnistSet { images, labels })
}
