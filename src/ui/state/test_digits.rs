//! Test digits the page holds itself (the first test chunk: cached once the worker has
//! fetched it, decoded in slices on first use), and a test digit shown in the draw panel.

use std::rc::Rc;

use leptos::prelude::*;

use crate::data::{GaveUp, MnistSet, RetryPolicy, Split};
use crate::web::{self, ManifestError};

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
}

/// The first test chunk, loaded on first use and kept.
#[derive(Clone, Copy)]
pub struct TestDigits(StoredValue<Option<Rc<MnistSet>>, LocalStorage>);

impl TestDigits {
    pub fn new() -> Self {
        Self(StoredValue::new_local(None))
    }

    pub async fn get(self) -> Result<Rc<MnistSet>, TestDigitsError> {
        if let Some(set) = self.0.get_value() {
            return Ok(set);
        }
        let source = web::ChunkSource::open(web::DATA_BASE).await.in_slices();
        let manifest = source.manifest().await?;
        let entry = manifest
            .chunks(Split::Test)
            .first()
            .ok_or(TestDigitsError::NoTestChunk)?;
        let chunk = source.load(entry, RetryPolicy::default(), |_| {}).await?;
        let set = Rc::new(chunk.set);
        self.0.set_value(Some(set.clone()));
        Ok(set)
    }

    /// A test digit picked at random.
    pub async fn random(self) -> Result<ShownDigit, TestDigitsError> {
        let set = self.get().await?;
        if set.is_empty() {
            return Err(TestDigitsError::Empty);
        }
        let index = ((js_sys::Math::random() * set.len() as f64) as usize).min(set.len() - 1);
        Ok(ShownDigit::of_test_set(&set, index))
    }
}

impl Default for TestDigits {
    fn default() -> Self {
        Self::new()
    }
}

/// A test digit put in the draw panel: the model is given exactly this 28×28 image.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownDigit {
    pub image: Vec<u8>,
    pub label: u8,
    /// Where it came from, for the caption.
    pub origin: String,
}

impl ShownDigit {
    pub fn of_test_set(set: &MnistSet, index: usize) -> Self {
        Self {
            image: set.image(index).to_vec(),
            label: set.labels[index],
            origin: format!("test digit #{index}"),
        }
    }
}
