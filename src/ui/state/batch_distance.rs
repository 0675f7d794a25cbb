//! Mean attention distance per layer and head over a batch of test digits (Fig. 7, right):
//! the figure the analysis and the ViT-against-CNN chart draw the drawing's own against. The
//! drawing worker measures it on test digits it fetches itself, once a card that shows it is
//! seen: a visit that never scrolls there never fetches the test chunk.

use leptos::prelude::GetUntracked;

use crate::slice_mean::SliceMean;
use crate::web::{DrawingError, Engine};

use super::{HostError, ModelHost};

/// Test digits in the batch, and how many go through at once: a drawing waits behind at most
/// one slice.
const DISTANCE_BATCH: u32 = 64;
const DISTANCE_SLICE: u32 = 8;

/// Why the batch was not measured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DistanceError {
    #[error("no model")]
    NoModel,
    /// The model failed on the batch (the drawing worker says why).
    #[error(transparent)]
    Measure(DrawingError),
    /// It failed on the GPU and could not move to the CPU.
    #[error(transparent)]
    Host(#[from] HostError),
}

/// Mean attention distance per layer and head over the first test digits. A GPU that fails
/// meanwhile hands the model to the CPU, as a failed drawing does, and the batch is measured
/// again there.
pub async fn test_batch_distance(host: ModelHost) -> Result<Vec<Vec<f32>>, DistanceError> {
    let engine = host.engine.get_untracked().ok_or(DistanceError::NoModel)?;
    match batch_distance_on(&engine).await {
        Err(DistanceError::Measure(error)) => {
            host.fail_over(engine.backend, error)?;
            let engine = host.engine.get_untracked().ok_or(DistanceError::NoModel)?;
            batch_distance_on(&engine).await
        }
        measured => measured,
    }
}

async fn batch_distance_on(engine: &Engine) -> Result<Vec<Vec<f32>>, DistanceError> {
    let mut mean = SliceMean::default();
    for first in (0..DISTANCE_BATCH).step_by(DISTANCE_SLICE as usize) {
        let part = engine
            .attention_distance(first, DISTANCE_SLICE)
            .await
            .map_err(DistanceError::Measure)?;
        mean.add(part);
    }
    Ok(mean.mean())
}
