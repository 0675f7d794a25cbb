//! Mean attention distance per layer and head over a batch of test digits (Fig. 7, right):
//! the figure the analysis and the ViT-against-CNN chart draw the drawing's own against. The
//! drawing worker measures it on test digits it fetches itself, once a card that shows it is
//! seen: a visit that never scrolls there never fetches the test chunk.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::slice_mean::SliceMean;
use crate::web::{DrawingError, Engine};

use super::{HostError, ModelHost, PageProblem};

/// Test digits in the batch, and how many go through at once: a drawing waits behind at most
/// one slice.
const DISTANCE_BATCH: u32 = 64;
const DISTANCE_SLICE: u32 = 8;

/// The batch's distance for the model in use, measured once per model and only once a card
/// that shows it has been seen: a context of its own (`AppState::provide`).
#[derive(Clone, Copy)]
pub struct BatchDistance {
    host: ModelHost,
    /// The page's banner, which says why a measuring failed.
    banner: RwSignal<Option<PageProblem>>,
    /// Per layer and head, when known.
    pub distance: RwSignal<Option<Vec<Vec<f32>>>>,
    /// Whether a card that shows it has been seen (until then it is not measured).
    wanted: StoredValue<bool>,
    /// The model generation it was last measured for.
    measured_for: StoredValue<Option<u32>>,
}

impl BatchDistance {
    pub fn new(host: ModelHost, banner: RwSignal<Option<PageProblem>>) -> Self {
        Self {
            host,
            banner,
            distance: RwSignal::new(None),
            wanted: StoredValue::new(false),
            measured_for: StoredValue::new(None),
        }
    }

    /// A card that shows the distance is seen: it is measured from now on, for this model and
    /// each one swapped in.
    pub fn want(self) {
        self.wanted.set_value(true);
        self.measure();
    }

    /// Other weights are in use: the distance shown is theirs once measured.
    pub fn renew(self) {
        self.distance.set(None);
        self.measure();
    }

    /// Measures the distance for the model in use, once per model, if a card that shows it
    /// has been seen and the model is a ViT.
    pub fn measure(self) {
        let host = self.host;
        let generation = host.generation.get_untracked();
        let is_vit = host
            .engine
            .with_untracked(|e| e.as_ref().is_some_and(|e| e.config.vit().is_some()));
        if !self.wanted.get_value() || !is_vit || self.measured_for.get_value() == Some(generation)
        {
            return;
        }
        self.measured_for.set_value(Some(generation));
        spawn_local(async move {
            match test_batch_distance(host).await {
                // Other weights came in meanwhile: they get their own.
                _ if host.generation.get_untracked() != generation => {}
                Ok(distance) => self.distance.set(Some(distance)),
                Err(error) => self.banner.set(Some(PageProblem::BatchDistance(error))),
            }
        });
    }
}

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
async fn test_batch_distance(host: ModelHost) -> Result<Vec<Vec<f32>>, DistanceError> {
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
