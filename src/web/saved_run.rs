//! The training run kept in Cache Storage, so a reload of the page can resume it.

use serde::{Deserialize, Serialize};

use crate::train::SessionState;
use crate::train::messages::SavedSummary;
#[cfg(feature = "train")]
use crate::{train::Session, weights};

use super::cache::ByteCache;

const RUN_CACHE: &str = "vitlab-training-v1";
const STATE_KEY: &str = "saved-run/state.json";
#[cfg(feature = "train")]
const MODEL_KEY: &str = "saved-run/model.bin";

/// What is saved besides the weights. The weights are safetensors (read back
/// asynchronously, so from WebGPU too). The optimiser's moments are not kept: Burn restores
/// them on its default device, which in a browser is an uninitialised WebGPU device, so a
/// resumed run starts AdamW's moments afresh (its bias correction makes that a mild bump).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SavedState {
    state: SessionState,
}

/// A saved run, read back.
#[cfg(feature = "train")]
pub struct SavedRun {
    pub state: SessionState,
    /// Safetensors.
    pub weights: Vec<u8>,
}

/// Saves `session`'s weights and state.
#[cfg(feature = "train")]
pub async fn save_run(session: &Session) -> Result<usize, String> {
    let cache = ByteCache::open(RUN_CACHE)
        .await
        .ok_or("this browser gives the page no Cache Storage")?;
    let state = session.state();
    let bytes =
        weights::to_safetensors_async(&session.inference_model(), &session.plan.config).await?;
    cache.put(MODEL_KEY, &bytes).await?;
    let step = state.step;
    // The state goes last: a save cut short leaves the previous state with newer weights.
    let json = serde_json::to_vec(&SavedState { state }).expect("the state serialises");
    cache.put(STATE_KEY, &json).await?;
    Ok(step)
}

async fn saved_state(cache: &ByteCache) -> Option<SavedState> {
    serde_json::from_slice(&cache.get(STATE_KEY).await?).ok()
}

/// What the page offers to resume, if anything.
pub async fn saved_summary() -> Option<SavedSummary> {
    let cache = ByteCache::open(RUN_CACHE).await?;
    let saved = saved_state(&cache).await?;
    let steps_per_epoch = saved.state.plan.steps_per_epoch(saved.state.train_items);
    Some(SavedSummary {
        step: saved.state.step,
        total_steps: saved.state.plan.epochs * steps_per_epoch,
        plan: saved.state.plan,
    })
}

#[cfg(feature = "train")]
pub async fn load_run() -> Result<SavedRun, String> {
    let cache = ByteCache::open(RUN_CACHE)
        .await
        .ok_or("this browser gives the page no Cache Storage")?;
    let saved = saved_state(&cache)
        .await
        .ok_or("no saved training run in this browser")?;
    let weights = cache
        .get(MODEL_KEY)
        .await
        .ok_or("the saved run's weights are missing")?;
    Ok(SavedRun {
        state: saved.state,
        weights,
    })
}

pub async fn forget_run() {
    super::cache::delete_cache(RUN_CACHE).await;
}
