//! One chunk file of MNIST as this project stores it: its layout, its limits, what can be
//! wrong with one, and the writer. The manifest that lists the chunks is `manifest.rs`; the
//! reader, `decoder.rs`.

use sha2::{Digest, Sha256};

use super::{IMAGE_SIDE, MnistSet};

/// First bytes of a decompressed chunk.
pub const CHUNK_MAGIC: &[u8; 4] = b"VMN1";
/// Level 9 of miniz_oxide is deterministic, so regenerated chunks are byte-identical.
const DEFLATE_LEVEL: u8 = 9;
pub(super) const HEADER_BYTES: usize = 12;
/// A chunk never inflates past this; guards against a decompression bomb.
pub(super) const MAX_CHUNK_BYTES: usize = 64 * 1024 * 1024;

/// Why a chunk cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChunkError {
    #[error("checksum mismatch: expected {expected}, got {actual} (damaged download?)")]
    Checksum { expected: String, actual: String },
    #[error("the chunk does not decompress: {0}")]
    Inflate(String),
    #[error("not a vitlab MNIST chunk (bad magic bytes)")]
    Magic,
    #[error("the chunk is truncated: {expected} bytes expected, {actual} present")]
    Truncated { expected: usize, actual: usize },
    #[error("the chunk claims {0} images, more than a chunk may hold")]
    TooMany(usize),
    #[error("the chunk holds {actual} items, the manifest says {expected}")]
    Count { expected: usize, actual: usize },
    #[error("label {0} is not a digit")]
    Label(u8),
    #[error("bad manifest: {0}")]
    Manifest(String),
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A digest as the manifest writes it.
pub(super) fn hex(digest: &[u8]) -> String {
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Compresses images and labels into one chunk file's bytes.
///
/// Layout before compression: magic, item count (u32 LE), image side (u16 LE), reserved
/// (u16), then every label, then every image row-major.
pub fn encode_chunk(set: &MnistSet) -> Vec<u8> {
    let mut raw = Vec::with_capacity(HEADER_BYTES + set.labels.len() + set.images.len());
    raw.extend_from_slice(CHUNK_MAGIC);
    raw.extend_from_slice(&(set.len() as u32).to_le_bytes());
    raw.extend_from_slice(&(IMAGE_SIDE as u16).to_le_bytes());
    raw.extend_from_slice(&0u16.to_le_bytes());
    raw.extend_from_slice(&set.labels);
    raw.extend_from_slice(&set.images);
    miniz_oxide::deflate::compress_to_vec(&raw, DEFLATE_LEVEL)
}

/// Label and pixels of one image.
pub(super) const IMAGE_BYTES: usize = 1 + IMAGE_SIDE * IMAGE_SIDE;
