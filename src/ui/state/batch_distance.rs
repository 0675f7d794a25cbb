//! Mean attention distance per layer and head over a batch of test digits (Fig. 7, right):
//! the figure the analysis and the ViT-against-CNN chart draw the drawing's own against.

use leptos::prelude::GetUntracked;

use crate::analysis::inference::images_of;
use crate::data::IMAGE_PIXELS;
use crate::slice_mean::SliceMean;
use crate::web::{self, Engine, EngineError};

use super::{HostError, ModelHost, TestDigits, TestDigitsError};

/// Test digits in the batch, and how many go through at once.
const DISTANCE_BATCH: usize = 64;
const DISTANCE_SLICE: usize = 8;

/// Why the batch was not measured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DistanceError {
    #[error("no model")]
    NoModel,
    /// The model failed on the batch (the browser layer says why).
    #[error(transparent)]
    Measure(EngineError),
    /// It failed on the GPU and could not move to the CPU.
    #[error(transparent)]
    Host(#[from] HostError),
}

/// The first test digits, from the chunk the worker also uses (verified, cached).
pub async fn distance_digits_of(
    digits: TestDigits,
) -> Result<Vec<[u8; IMAGE_PIXELS]>, TestDigitsError> {
    Ok(images_of(&*digits.get().await?, DISTANCE_BATCH))
}

/// Mean attention distance per layer and head over `images`. A GPU that fails meanwhile hands
/// the model to the CPU, as a failed drawing does, and the batch is measured again there.
pub async fn test_batch_distance(
    host: ModelHost,
    images: &[[u8; IMAGE_PIXELS]],
) -> Result<Vec<Vec<f32>>, DistanceError> {
    let engine = host.engine.get_untracked().ok_or(DistanceError::NoModel)?;
    match batch_distance_on(&engine, images).await {
        Err(DistanceError::Measure(error)) => {
            host.fail_over(engine.backend, error)?;
            let engine = host.engine.get_untracked().ok_or(DistanceError::NoModel)?;
            batch_distance_on(&engine, images).await
        }
        measured => measured,
    }
}

async fn batch_distance_on(
    engine: &Engine,
    images: &[[u8; IMAGE_PIXELS]],
) -> Result<Vec<Vec<f32>>, DistanceError> {
    // In slices, yielding between them, so the page never stalls for the whole batch (this
    // also runs when weights are swapped in mid-training).
    let mut mean = SliceMean::default();
    for slice in images.chunks(DISTANCE_SLICE) {
        let part = engine
            .attention_distance(slice)
            .await
            .map_err(DistanceError::Measure)?;
        mean.add(part);
        web::sleep_ms(0).await;
    }
    Ok(mean.mean())
}
