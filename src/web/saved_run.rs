//! The training run kept in Cache Storage, so a reload of the page can resume it.

use serde::{Deserialize, Serialize};

use crate::protocol::SavedSummary;
use crate::train::{SavedRunError, SessionState};
#[cfg(feature = "train")]
use crate::{
    model::Budget,
    train::{Checkpoint, CheckpointError, Session},
    weights::{self, WeightsError},
};

use super::cache::{ByteCache, StorageError};

const RUN_CACHE: &str = "vitlab-training-v1";
const STATE_KEY: &str = "saved-run/state.json";
/// The weights go to the slot the state does not name, and the state, written last, then
/// names it: a save cut short, or a new run's first save, never leaves a state beside
/// weights that are not its own. Saves made before the slots name none: the first slot.
const MODEL_SLOTS: [&str; 2] = ["saved-run/model.bin", "saved-run/model-b.bin"];

/// Why the run could not be saved in this browser, offered or resumed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoredRunError {
    #[error("this browser gives the page no Cache Storage")]
    NoStorage,
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The device did not hand the run's tensors back.
    #[cfg(feature = "train")]
    #[error(transparent)]
    Read(#[from] weights::ReadError),
    #[error("its state does not parse ({0})")]
    StateUnreadable(String),
    #[error("its weights slot {0} is unknown")]
    UnknownSlot(usize),
    #[error(transparent)]
    State(#[from] SavedRunError),
    #[error("no saved training run in this browser")]
    NothingSaved,
    /// What [`saved_summary`] would have said against the saved state.
    #[error("the saved run cannot be resumed: {0}")]
    NotResumable(Box<StoredRunError>),
    #[error("the saved run's weights are missing")]
    WeightsMissing,
    #[cfg(feature = "train")]
    #[error("the saved run: {0}")]
    Weights(WeightsError),
    #[cfg(feature = "train")]
    #[error("the saved run: {0}")]
    Checkpoint(CheckpointError),
}

/// What the page reads to offer a resume without reading the run itself. The run is a
/// checkpoint (`train::Checkpoint`: weights, AdamW's moments and this state, the format
/// `vit train` writes), read back asynchronously, so from WebGPU too. Saves made before
/// checkpoints hold weights alone; they resume with fresh moments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SavedState {
    state: SessionState,
    /// Which of the weight slots holds this state's weights.
    #[serde(default)]
    slot: usize,
}

/// Saves `session` as a checkpoint.
#[cfg(feature = "train")]
pub async fn save_run(session: &Session) -> Result<usize, StoredRunError> {
    let cache = ByteCache::open(RUN_CACHE)
        .await
        .ok_or(StoredRunError::NoStorage)?;
    let checkpoint = session.checkpoint_async().await?;
    let bytes = checkpoint.encode();
    let state = checkpoint.state;
    let slot = match saved_state(&cache).await {
        Some(Ok((saved, _))) => (saved.slot + 1) % MODEL_SLOTS.len(),
        _ => 0,
    };
    cache.put(MODEL_SLOTS[slot], &bytes).await?;
    let step = state.step;
    let json = serde_json::to_vec(&SavedState { state, slot }).expect("the state serialises");
    cache.put(STATE_KEY, &json).await?;
    Ok(step)
}

/// The saved state, if there is one, with what it offers to resume: checked, so that a
/// damaged or hostile one is reported rather than resumed (or left to panic on every load).
async fn saved_state(
    cache: &ByteCache,
) -> Option<Result<(SavedState, SavedSummary), StoredRunError>> {
    let bytes = cache.get(STATE_KEY).await?;
    let saved = match serde_json::from_slice::<SavedState>(&bytes) {
        Ok(saved) => saved,
        Err(error) => {
            let why = crate::weights::brief(&error);
            return Some(Err(StoredRunError::StateUnreadable(why)));
        }
    };
    if saved.slot >= MODEL_SLOTS.len() {
        return Some(Err(StoredRunError::UnknownSlot(saved.slot)));
    }
    Some(match saved.state.summary() {
        Ok(summary) => Ok((saved, summary)),
        Err(error) => Err(error.into()),
    })
}

/// What the page offers to resume, if anything, or why the saved run cannot be resumed: as
/// [`crate::protocol::FromTrainer::Saved`] carries it to the page, the reason as text.
pub async fn saved_summary() -> Option<Result<SavedSummary, String>> {
    let cache = ByteCache::open(RUN_CACHE).await?;
    Some(
        saved_state(&cache)
            .await?
            .map(|(_, summary)| summary)
            .map_err(|error| error.to_string()),
    )
}

/// The saved run, checked as a file from anywhere would be.
#[cfg(feature = "train")]
pub async fn load_run() -> Result<Checkpoint, StoredRunError> {
    let cache = ByteCache::open(RUN_CACHE)
        .await
        .ok_or(StoredRunError::NoStorage)?;
    let (saved, _) = saved_state(&cache)
        .await
        .ok_or(StoredRunError::NothingSaved)?
        .map_err(|problem| StoredRunError::NotResumable(Box::new(problem)))?;
    let bytes = cache
        .get(MODEL_SLOTS[saved.slot])
        .await
        .ok_or(StoredRunError::WeightsMissing)?;
    match Checkpoint::decode(&bytes, &Budget::PAGE) {
        // The state the page offered (and checked) is the one resumed: both are the page's.
        Ok(checkpoint) => Ok(Checkpoint {
            state: saved.state,
            ..checkpoint
        }),
        // Saved before checkpoints: weights alone beside the state.
        Err(crate::train::CheckpointError::NoRun) => Ok(Checkpoint {
            weights: weights::decode(&bytes).map_err(StoredRunError::Weights)?,
            state: saved.state,
            moments: None,
        }),
        Err(error) => Err(StoredRunError::Checkpoint(error)),
    }
}

pub async fn forget_run() {
    super::cache::delete_cache(RUN_CACHE).await;
}
