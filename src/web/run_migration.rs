//! Runs kept by earlier pages move into the database at the first load, once: those of the
//! Cache Storage runs table (`vitlab-runs-v1`: an index, each run's record, checkpoint and
//! weights) and the one saved run of the pages before it (`vitlab-training-v1`). Each keeps
//! an id derived from its old key (the table's own id; a digest of the saved run's bytes), so
//! that a second import finds it kept, or deleted; the move leaves a mark in the database in
//! its own transaction, and the old caches are deleted only after it has committed. A tab that
//! loads at the same time moves nothing twice, and a load after a crash between the commit and
//! the deletion finds the mark and only deletes them.

use crate::run_record::{MAX_RUNS, RunRecord};
use crate::run_store::{MAX_RUN_ID, RunId, StoreError, read_header};

use super::cache::{ByteCache, delete_cache};
use super::global::caches;
use super::run_db::{MAX_RECORD_BYTES, OldRun, RunDb};

const RUNS_CACHE: &str = "vitlab-runs-v1";
const INDEX_KEY: &str = "runs/index.json";
/// The record an earlier page's one saved run belonged to.
const LEGACY_CURRENT_KEY: &str = "runs/current.json";
const LEGACY_CACHE: &str = "vitlab-training-v1";
const LEGACY_STATE: &str = "saved-run/state.json";
const LEGACY_SLOTS: [&str; 2] = ["saved-run/model.bin", "saved-run/model-b.bin"];

/// A cache an earlier page made, without making it where there is none.
async fn existing(name: &str) -> Option<ByteCache> {
    let caches = caches()?;
    let has = wasm_bindgen_futures::JsFuture::from(caches.has(name))
        .await
        .ok()?
        .as_bool()?;
    if has {
        ByteCache::open(name).await
    } else {
        None
    }
}

async fn runs_of_the_runs_table(cache: &ByteCache) -> Vec<OldRun> {
    let mut ids: Vec<RunId> = match cache.get(INDEX_KEY).await {
        Some(bytes) if bytes.len() <= MAX_RECORD_BYTES => {
            serde_json::from_slice(&bytes).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    ids.truncate(MAX_RUNS);
    let mut runs = Vec::new();
    for id in ids {
        let record = cache
            .get(&format!("runs/{id}.json"))
            .await
            .filter(|bytes| bytes.len() <= MAX_RECORD_BYTES)
            .and_then(|bytes| serde_json::from_slice::<RunRecord>(&bytes).ok())
            .filter(|record| record.id == id);
        let Some(record) = record else { continue };
        let checkpoint = cache
            .get(&format!("runs/{id}.ckpt"))
            .await
            .filter(|bytes| read_header(bytes).is_ok());
        let weights = cache.get(&format!("runs/{id}.safetensors")).await;
        runs.push((record, checkpoint, weights));
    }
    runs
}

/// The one run the pages before the runs table saved, as a run of its own (or as the
/// checkpoint of the record that named it).
async fn the_legacy_run(legacy: &ByteCache, runs: &mut Vec<OldRun>, named: Option<RunId>) {
    #[derive(serde::Deserialize)]
    struct LegacyState {
        #[serde(default)]
        slot: usize,
    }
    let Some(json) = legacy.get(LEGACY_STATE).await else {
        return;
    };
    let slot = serde_json::from_slice::<LegacyState>(&json).map_or(0, |state| state.slot);
    let Some(key) = LEGACY_SLOTS.get(slot) else {
        return;
    };
    let Some(bytes) = legacy.get(key).await else {
        return;
    };
    let Ok((state, summary)) = read_header(&bytes) else {
        return;
    };
    let derived = derived_id(&bytes);
    if let Some(run) = named.and_then(|id| runs.iter_mut().find(|run| run.0.id == id)) {
        if run.1.is_none() {
            run.1 = Some(bytes);
        }
        return;
    }
    let id = named.unwrap_or(derived);
    let mut record = RunRecord::new(id, state.plan, 0);
    record.started = js_sys::Date::now() as u64;
    record.step = state.step;
    record.total_steps = summary.total_steps;
    runs.push((record, Some(bytes), None));
}

/// The id of the one run an earlier page saved: a digest of its bytes, the same in every tab
/// and at every load (below 2^53, as every run id).
fn derived_id(bytes: &[u8]) -> RunId {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(bytes);
    let id = u64::from_le_bytes(digest[..8].try_into().expect("8 bytes")) & MAX_RUN_ID;
    id.max(1)
}

/// Moves what earlier pages kept into `db`; how many runs moved.
pub async fn move_old_runs(db: &RunDb) -> Result<usize, StoreError> {
    let table = existing(RUNS_CACHE).await;
    let legacy = existing(LEGACY_CACHE).await;
    if table.is_none() && legacy.is_none() {
        return Ok(0);
    }
    if db.old_stores_moved().await? {
        // Moved by an earlier load, which stopped before the old caches went.
        delete_cache(RUNS_CACHE).await;
        delete_cache(LEGACY_CACHE).await;
        return Ok(0);
    }
    let mut runs = Vec::new();
    let mut named = None;
    if let Some(cache) = &table {
        runs = runs_of_the_runs_table(cache).await;
        named = cache
            .get(LEGACY_CURRENT_KEY)
            .await
            .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    }
    if let Some(legacy) = &legacy {
        the_legacy_run(legacy, &mut runs, named).await;
    }
    let moved = db.import(runs).await?;
    // Committed: the old entries may go.
    delete_cache(RUNS_CACHE).await;
    delete_cache(LEGACY_CACHE).await;
    Ok(moved)
}
