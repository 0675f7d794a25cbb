//! `manifest.json`: the chunks of each split, in order, with their sizes and digests, and the
//! caps that keep a small manifest from making the reader fetch, inflate and hold without end.

use serde::{Deserialize, Serialize};

use super::IMAGE_SIDE;
use super::chunk::{ChunkError, IMAGE_BYTES, MAX_CHUNK_BYTES};

/// The manifest's `format` field.
pub const MANIFEST_FORMAT: &str = "vitlab-mnist-chunks/1";

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
