use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::decoder::ChunkDecoder;
use super::{IMAGE_SIDE, MnistSet};

/// First bytes of a decompressed chunk.
pub const CHUNK_MAGIC: &[u8; 4] = b"VMN1";
/// The manifest's `format` field.
pub const MANIFEST_FORMAT: &str = "vitlab-mnist-chunks/1";
/// Level 9 of miniz_oxide is deterministic, so regenerated chunks are byte-identical.
const DEFLATE_LEVEL: u8 = 9;
pub(super) const HEADER_BYTES: usize = 12;
/// A chunk never inflates past this; guards against a decompression bomb.
pub(super) const MAX_CHUNK_BYTES: usize = 64 * 1024 * 1024;

/// Which half of MNIST.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    Train,
    Test,
}

/// One chunk as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkEntry {
    /// File name, relative to the manifest.
    pub file: String,
    pub items: usize,
    pub bytes: usize,
    pub sha256: String,
}

/// `manifest.json`: the chunks of each split, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub image_side: usize,
    pub train: Vec<ChunkEntry>,
    pub test: Vec<ChunkEntry>,
}

impl Manifest {
    pub fn chunks(&self, split: Split) -> &[ChunkEntry] {
        match split {
            Split::Train => &self.train,
            Split::Test => &self.test,
        }
    }

    pub fn items(&self, split: Split) -> usize {
        self.chunks(split).iter().map(|chunk| chunk.items).sum()
    }

    pub fn parse(json: &str) -> Result<Self, ChunkError> {
        let manifest: Manifest =
            serde_json::from_str(json).map_err(|error| ChunkError::Manifest(error.to_string()))?;
        if manifest.format != MANIFEST_FORMAT || manifest.image_side != IMAGE_SIDE {
            return Err(ChunkError::Manifest(format!(
                "format `{}` with {}-pixel images is not `{MANIFEST_FORMAT}` with {IMAGE_SIDE}",
                manifest.format, manifest.image_side
            )));
        }
        manifest.check_limits()?;
        Ok(manifest)
    }

    /// MNIST has 70,000 images in 28 chunks; a manifest may list a few times that at most, so
    /// that a small manifest cannot make the reader fetch, inflate and hold without end.
    pub const MAX_CHUNKS: usize = 1_000;
    pub const MAX_IMAGES: usize = 200_000;
    /// What a manifest's chunk files may add up to: what its images inflate to at the image
    /// cap (157 MB), which compressed files never exceed.
    pub const MAX_FILE_BYTES: usize = Self::MAX_IMAGES * IMAGE_BYTES;

    /// Caps on chunks, images and bytes for the whole manifest, in checked arithmetic; every
    /// file named once; neither split empty (training needs both, evaluating the test half).
    fn check_limits(&self) -> Result<(), ChunkError> {
        let bad = |why: String| Err(ChunkError::Manifest(why));
        let chunks = self.train.len() + self.test.len();
        if chunks > Self::MAX_CHUNKS {
            return bad(format!(
                "it lists {chunks} chunks, more than the {} it may",
                Self::MAX_CHUNKS
            ));
        }
        for (split, name) in [(Split::Train, "training"), (Split::Test, "test")] {
            if self.chunks(split).iter().all(|chunk| chunk.items == 0) {
                return bad(format!("it lists no {name} images"));
            }
        }
        let mut files = std::collections::BTreeSet::new();
        let mut images = 0usize;
        let mut bytes = 0usize;
        for chunk in self.train.iter().chain(&self.test) {
            if !files.insert(chunk.file.as_str()) {
                return bad(format!("it lists the chunk `{}` twice", chunk.file));
            }
            images = images
                .checked_add(chunk.items)
                .filter(|&images| images <= Self::MAX_IMAGES)
                .ok_or_else(|| {
                    ChunkError::Manifest(format!(
                        "its chunks hold more than the {} images it may list",
                        Self::MAX_IMAGES
                    ))
                })?;
            bytes = bytes
                .checked_add(chunk.bytes)
                .filter(|&bytes| bytes <= Self::MAX_FILE_BYTES && chunk.bytes <= MAX_CHUNK_BYTES)
                .ok_or_else(|| {
                    ChunkError::Manifest(format!(
                        "its chunk files add up to more than the {} MB it may list",
                        Self::MAX_FILE_BYTES >> 20
                    ))
                })?;
        }
        Ok(())
    }
}

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

/// Verifies a chunk against its manifest entry and decodes it.
pub fn decode_chunk(bytes: &[u8], entry: &ChunkEntry) -> Result<MnistSet, ChunkError> {
    ChunkDecoder::verified(bytes, entry).finish()
}

/// Decodes a chunk whose integrity was checked elsewhere (or is not known).
pub fn decode_chunk_unverified(bytes: &[u8]) -> Result<MnistSet, ChunkError> {
    ChunkDecoder::unverified(bytes).finish()
}

/// Label and pixels of one image.
pub(super) const IMAGE_BYTES: usize = 1 + IMAGE_SIDE * IMAGE_SIDE;
