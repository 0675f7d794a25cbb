//! The training run kept in Cache Storage, so a reload of the page can resume it.

use serde::{Deserialize, Serialize};

use crate::train::messages::SavedSummary;
use crate::train::{Checkpoint, Session, SessionState};
use crate::weights;

use super::cache::ByteCache;

const RUN_CACHE: &str = "vitlab-training-v1";
const STATE_KEY: &str = "saved-run/state.json";
const MODEL_KEY: &str = "saved-run/model.bin";
const OPTIMIZER_KEY: &str = "saved-run/optimizer.bin";

/// How the model was saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ModelFormat {
    /// Burn records of the model and the optimiser: an exact resume. Taking them reads
    /// tensors synchronously, which only the CPU device allows in a browser.
    Checkpoint,
    /// Safetensors weights (read back asynchronously, so from WebGPU too); the optimiser's
    /// moments start afresh on resume.
    Safetensors,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SavedState {
    state: SessionState,
    format: ModelFormat,
}

/// A saved run, read back.
pub struct SavedRun {
    pub state: SessionState,
    pub model: SavedModel,
}

pub enum SavedModel {
    Checkpoint(Checkpoint),
    Safetensors(Vec<u8>),
}

/// Saves `session`; `exact` asks for the optimiser too (allowed on CPU devices only).
pub async fn save_run(session: &Session, exact: bool) -> Result<usize, String> {
    let cache = ByteCache::open(RUN_CACHE)
        .await
        .ok_or("this browser gives the page no Cache Storage")?;
    let state = session.state();
    let format = if exact {
        let checkpoint = session.checkpoint()?;
        cache.put(MODEL_KEY, &checkpoint.model).await?;
        cache.put(OPTIMIZER_KEY, &checkpoint.optimizer).await?;
        ModelFormat::Checkpoint
    } else {
        let bytes =
            weights::to_safetensors_async(&session.inference_model(), &session.plan.config).await?;
        cache.put(MODEL_KEY, &bytes).await?;
        cache.delete(OPTIMIZER_KEY).await;
        ModelFormat::Safetensors
    };
    let step = state.step;
    // The state goes last: a save cut short leaves the previous state with a newer model.
    let json = serde_json::to_vec(&SavedState { state, format }).expect("the state serialises");
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
        with_optimizer: saved.format == ModelFormat::Checkpoint,
    })
}

pub async fn load_run() -> Result<SavedRun, String> {
    let cache = ByteCache::open(RUN_CACHE)
        .await
        .ok_or("this browser gives the page no Cache Storage")?;
    let saved = saved_state(&cache)
        .await
        .ok_or("no saved training run in this browser")?;
    let model = cache
        .get(MODEL_KEY)
        .await
        .ok_or("the saved run's model is missing")?;
    let model = match saved.format {
        ModelFormat::Checkpoint => SavedModel::Checkpoint(Checkpoint {
            model,
            optimizer: cache
                .get(OPTIMIZER_KEY)
                .await
                .ok_or("the saved run's optimiser state is missing")?,
            step: saved.state.step,
        }),
        ModelFormat::Safetensors => SavedModel::Safetensors(model),
    };
    Ok(SavedRun {
        state: saved.state,
        model,
    })
}

pub async fn forget_run() {
    super::cache::delete_cache(RUN_CACHE).await;
}
