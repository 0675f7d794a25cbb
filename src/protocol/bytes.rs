//! Values that travel beside a message rather than inside it: `f32`s as little-endian bytes
//! and 28×28 images as their pixels one after another, so a transport copies megabytes once
//! instead of writing them out as JSON.

use crate::data::IMAGE_PIXELS;

/// Bytes that do not hold the floats a message announced.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BytesError {
    #[error("{what}: {bytes} bytes are not whole 4-byte floats")]
    Ragged { what: &'static str, bytes: usize },
    /// The only bytes counted today are a model's values (a step's parameters and
    /// images, or its gradients), hence the wording.
    #[error("{what}: {found} values where the model has {expected}")]
    WrongCount {
        what: &'static str,
        found: usize,
        expected: usize,
    },
}

/// `values` as little-endian bytes, to travel beside a message (a worker's read-back values,
/// a step's parameters or gradients, for a helper).
pub fn floats_to_bytes<'a>(values: impl IntoIterator<Item = &'a f32>) -> Vec<u8> {
    values.into_iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The floats [`floats_to_bytes`] made; trailing bytes that make no whole float are dropped.
pub fn bytes_to_floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// The floats of `bytes` (named `what` in an error), which must be whole floats, and exactly
/// `expected` of them where that is given.
pub fn whole_floats(
    bytes: &[u8],
    what: &'static str,
    expected: Option<usize>,
) -> Result<Vec<f32>, BytesError> {
    if !bytes.len().is_multiple_of(4) {
        return Err(BytesError::Ragged {
            what,
            bytes: bytes.len(),
        });
    }
    let found = bytes.len() / 4;
    if let Some(expected) = expected.filter(|&expected| expected != found) {
        return Err(BytesError::WrongCount {
            what,
            found,
            expected,
        });
    }
    Ok(bytes_to_floats(bytes))
}

/// `images` one after another, to travel beside a message.
pub fn images_to_bytes(images: &[[u8; IMAGE_PIXELS]]) -> Vec<u8> {
    images.iter().flatten().copied().collect()
}

/// The `count` images [`images_to_bytes`] made; `None` unless `bytes` holds exactly that many
/// and there is at least one.
pub fn bytes_to_images(bytes: &[u8], count: usize) -> Option<Vec<[u8; IMAGE_PIXELS]>> {
    if count == 0 || bytes.len() != count.checked_mul(IMAGE_PIXELS)? {
        return None;
    }
    let images = bytes
        .chunks_exact(IMAGE_PIXELS)
        .map(|image| image.try_into().expect("chunks of IMAGE_PIXELS"))
        .collect();
    Some(images)
}
