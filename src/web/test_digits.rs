//! Test digits a worker holds itself: the first test chunk, fetched on first use (Cache
//! Storage first, verified against the manifest, as the training worker fetches its chunks) and
//! kept for the worker's life. The drawing worker draws a random digit and measures the
//! attention distance from it, the explaining worker its occlusion curves: the page's own
//! thread never decodes a chunk.

use std::cell::RefCell;
use std::rc::Rc;

use crate::data::{GaveUp, MnistSet, RetryPolicy, Split};

use super::chunks::{ChunkSource, DATA_BASE, ManifestError};

/// Why no test digit could be had.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TestDigitsError {
    /// The manifest did not load.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The chunk did not load.
    #[error(transparent)]
    Chunk(#[from] GaveUp),
    #[error("the manifest lists no test chunk")]
    NoTestChunk,
    #[error("the test chunk holds no digits")]
    Empty,
    #[error("test digit {index} is past the {count} held")]
    OutOfRange { index: usize, count: usize },
}

/// The first test chunk, loaded on first use and kept.
#[derive(Default)]
pub struct TestDigits(RefCell<Option<Rc<MnistSet>>>);

impl TestDigits {
    pub async fn get(&self) -> Result<Rc<MnistSet>, TestDigitsError> {
        if let Some(set) = self.0.borrow().clone() {
            return Ok(set);
        }
        let source = ChunkSource::open(DATA_BASE).await;
        let manifest = source.manifest().await?;
        let entry = manifest
            .chunks(Split::Test)
            .first()
            .ok_or(TestDigitsError::NoTestChunk)?;
        let chunk = source.load(entry, RetryPolicy::default(), |_| {}).await?;
        if chunk.set.is_empty() {
            return Err(TestDigitsError::Empty);
        }
        let set = Rc::new(chunk.set);
        *self.0.borrow_mut() = Some(set.clone());
        Ok(set)
    }

    /// Test digit `index`, or one picked at random: its index, label and 784 grey levels.
    pub async fn digit(
        &self,
        index: Option<usize>,
    ) -> Result<(usize, u8, Vec<u8>), TestDigitsError> {
        let set = self.get().await?;
        let count = set.len();
        let index = index
            .unwrap_or_else(|| ((js_sys::Math::random() * count as f64) as usize).min(count - 1));
        if index >= count {
            return Err(TestDigitsError::OutOfRange { index, count });
        }
        Ok((index, set.labels[index], set.image(index).to_vec()))
    }

    /// `count` test digits from the `first`th (fewer where the chunk ends), and their labels.
    pub async fn slice(
        &self,
        first: usize,
        count: usize,
    ) -> Result<(Vec<[u8; crate::data::IMAGE_PIXELS]>, Vec<u8>), TestDigitsError> {
        let set = self.get().await?;
        let end = first.saturating_add(count).min(set.len());
        let range = first.min(end)..end;
        let images = range
            .clone()
            .map(|i| set.image(i).try_into().expect("784 pixels"))
            .collect();
        Ok((images, set.labels[range].to_vec()))
    }
}
