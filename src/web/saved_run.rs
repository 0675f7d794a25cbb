//! Each run's checkpoint, kept in Cache Storage beside its record in the runs table
//! (`runs/{id}.ckpt`), so that a reload resumes the tab's run and the table continues any run.
//! A checkpoint is one entry (weights, AdamW's moments and the run's state, the file
//! `vit train` writes): written in one put, it cannot pair one run's state with another's
//! weights, and runs trained in two tabs at once each have their own.

use crate::protocol::SavedSummary;
use crate::train::{SESSION_KEY, SavedRunError, SessionState};
#[cfg(feature = "train")]
use crate::{
    model::Budget,
    train::{Checkpoint, CheckpointError, Session},
    weights,
};

use super::cache::{ByteCache, StorageError, delete_cache};
use super::run_log::{RUNS_CACHE, checkpoint_key};

/// Why a run could not be saved in this browser, offered or resumed.
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
    #[error(transparent)]
    State(#[from] SavedRunError),
    #[error("no saved training run in this browser")]
    NothingSaved,
    /// What [`saved_summary`] would have said against the saved state.
    #[error("the saved run cannot be resumed: {0}")]
    NotResumable(Box<StoredRunError>),
    #[cfg(feature = "train")]
    #[error("the saved run: {0}")]
    Checkpoint(CheckpointError),
}

/// Saves `session` as run `run`'s checkpoint; the step saved.
#[cfg(feature = "train")]
pub async fn save_run(session: &Session, run: u64) -> Result<usize, StoredRunError> {
    let cache = ByteCache::open(RUNS_CACHE)
        .await
        .ok_or(StoredRunError::NoStorage)?;
    let checkpoint = session.checkpoint_async().await?;
    cache
        .put(&checkpoint_key(run), &checkpoint.encode())
        .await?;
    Ok(checkpoint.state.step)
}

/// The state in a checkpoint's header, read without its tensors (the page, which offers the
/// resume, has no training code), and checked: a damaged or hostile one is reported rather
/// than resumed, or left to panic on every load.
fn state_of(bytes: &[u8]) -> Result<(SessionState, SavedSummary), StoredRunError> {
    let unreadable = |why: String| StoredRunError::StateUnreadable(why);
    let (_, header) = safetensors::SafeTensors::read_metadata(bytes)
        .map_err(|error| unreadable(crate::weights::brief(&error)))?;
    let json = header
        .metadata()
        .as_ref()
        .and_then(|metadata| metadata.get(SESSION_KEY))
        .ok_or_else(|| unreadable(format!("no {SESSION_KEY}")))?;
    let state: SessionState =
        serde_json::from_str(json).map_err(|error| unreadable(crate::weights::brief(&error)))?;
    let summary = state.summary()?;
    Ok((state, summary))
}

/// What the page offers to resume of run `run`, if it has a checkpoint, or why it cannot be
/// resumed: as [`crate::protocol::FromTrainer::Saved`] carries it to the page, the reason as
/// text.
pub async fn saved_summary(run: u64) -> Option<Result<SavedSummary, String>> {
    let cache = ByteCache::open(RUNS_CACHE).await?;
    let bytes = cache.get(&checkpoint_key(run)).await?;
    Some(
        state_of(&bytes)
            .map(|(_, summary)| summary)
            .map_err(|error| error.to_string()),
    )
}

/// Run `run`'s checkpoint, checked as a file from anywhere would be.
#[cfg(feature = "train")]
pub async fn load_run(run: u64) -> Result<Checkpoint, StoredRunError> {
    let cache = ByteCache::open(RUNS_CACHE)
        .await
        .ok_or(StoredRunError::NoStorage)?;
    let bytes = cache
        .get(&checkpoint_key(run))
        .await
        .ok_or(StoredRunError::NothingSaved)?;
    if let Err(problem) = state_of(&bytes) {
        return Err(StoredRunError::NotResumable(Box::new(problem)));
    }
    Checkpoint::decode(&bytes, &Budget::PAGE).map_err(StoredRunError::Checkpoint)
}

/// Forgets run `run`'s checkpoint (its record stays, with its weights).
pub async fn forget_run(run: u64) {
    if let Some(cache) = ByteCache::open(RUNS_CACHE).await {
        let _ = cache.delete(&checkpoint_key(run)).await;
    }
}

/// Where pages before runs had checkpoints of their own kept the one saved run.
const LEGACY_CACHE: &str = "vitlab-training-v1";
const LEGACY_STATE: &str = "saved-run/state.json";
const LEGACY_SLOTS: [&str; 2] = ["saved-run/model.bin", "saved-run/model-b.bin"];

/// The run an earlier version of the page saved, moved to run `run`'s checkpoint; whether
/// there was one. Weights saved without a run (before checkpoints) cannot be continued and
/// are let go.
pub async fn adopt_legacy_run(run: u64) -> bool {
    #[derive(serde::Deserialize)]
    struct LegacyState {
        #[serde(default)]
        slot: usize,
    }
    let Some(legacy) = ByteCache::open(LEGACY_CACHE).await else {
        return false;
    };
    let slot = match legacy.get(LEGACY_STATE).await {
        Some(json) => serde_json::from_slice::<LegacyState>(&json).map_or(0, |state| state.slot),
        None => return false,
    };
    let bytes = match LEGACY_SLOTS.get(slot) {
        Some(key) => legacy.get(key).await,
        None => None,
    };
    let adopted = match (bytes, ByteCache::open(RUNS_CACHE).await) {
        (Some(bytes), Some(runs)) if state_of(&bytes).is_ok() => {
            runs.put(&checkpoint_key(run), &bytes).await.is_ok()
        }
        _ => false,
    };
    delete_cache(LEGACY_CACHE).await;
    adopted
}
