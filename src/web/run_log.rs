//! The runs table's records, kept in Cache Storage (`vitlab-runs-v1`) so they survive a
//! reload. Cache Storage rather than IndexedDB: the page already keeps its chunks and saved
//! run there, it holds large bodies (a run's weights) as they are, and it needs no binding
//! beyond `web-sys`'s. What the cache holds is read as hostile: a record that does not
//! parse, or is larger than any record the page writes, is left out.

use crate::run_record::{MAX_RUNS, RunRecord};

use super::cache::{ByteCache, StorageError};

/// Why a record or its weights were not kept, read or deleted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunLogError {
    #[error("this browser gives the page no Cache Storage, so runs are not kept")]
    NoStorage,
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// A record or the index that would not serialise (serde's words).
    #[error("{0}")]
    Json(String),
    #[error("its record takes {0} bytes")]
    TooLarge(usize),
    #[error("this run's weights are no longer in the browser")]
    WeightsGone,
}

impl From<serde_json::Error> for RunLogError {
    fn from(error: serde_json::Error) -> Self {
        Self::Json(error.to_string())
    }
}

/// The records, their weights and their checkpoints (`saved_run`).
pub(super) const RUNS_CACHE: &str = "vitlab-runs-v1";
const INDEX_KEY: &str = "runs/index.json";
/// Earlier pages kept one saved run for the whole browser and named its record here; read
/// once to move that run to its record's checkpoint (`saved_run::adopt_legacy_run`).
const LEGACY_CURRENT_KEY: &str = "runs/current.json";
/// No record the page writes comes near this (its history is thinned to a few hundred points).
const MAX_RECORD_BYTES: usize = 1 << 20;

fn record_key(id: u64) -> String {
    format!("runs/{id}.json")
}

fn weights_key(id: u64) -> String {
    format!("runs/{id}.safetensors")
}

/// Where run `id`'s checkpoint is kept, beside its record.
pub(super) fn checkpoint_key(id: u64) -> String {
    format!("runs/{id}.ckpt")
}

#[derive(Clone)]
pub struct RunLog {
    cache: ByteCache,
}

impl RunLog {
    pub async fn open() -> Result<Self, RunLogError> {
        ByteCache::open(RUNS_CACHE)
            .await
            .map(|cache| Self { cache })
            .ok_or(RunLogError::NoStorage)
    }

    async fn ids(&self) -> Vec<u64> {
        let Some(bytes) = self.cache.get(INDEX_KEY).await else {
            return Vec::new();
        };
        let mut ids: Vec<u64> = serde_json::from_slice(&bytes).unwrap_or_default();
        ids.truncate(MAX_RUNS);
        ids
    }

    /// Every record that reads back, oldest first.
    pub async fn records(&self) -> Vec<RunRecord> {
        let mut records = Vec::new();
        for id in self.ids().await {
            if let Some(record) = self.record(id).await {
                records.push(record);
            }
        }
        records
    }

    pub async fn record(&self, id: u64) -> Option<RunRecord> {
        let bytes = self.cache.get(&record_key(id)).await?;
        if bytes.len() > MAX_RECORD_BYTES {
            return None;
        }
        serde_json::from_slice::<RunRecord>(&bytes)
            .ok()
            .filter(|record| record.id == id)
    }

    /// Writes `record`; a new one joins the index, and past [`MAX_RUNS`] the oldest go.
    pub async fn save(&self, record: &RunRecord) -> Result<(), RunLogError> {
        let mut json = serde_json::to_vec(record)?;
        // Never larger than it may be read back: a big model's timeline is thinned to fit.
        let mut fitted = record.clone();
        while json.len() > MAX_RECORD_BYTES && !fitted.timeline.snapshots.is_empty() {
            if fitted.timeline.snapshots.len() == 1 {
                fitted.timeline.snapshots.clear();
            } else {
                fitted.timeline.halve();
            }
            json = serde_json::to_vec(&fitted)?;
        }
        if json.len() > MAX_RECORD_BYTES {
            return Err(RunLogError::TooLarge(json.len()));
        }
        self.cache.put(&record_key(record.id), &json).await?;
        let mut ids = self.ids().await;
        if !ids.contains(&record.id) {
            ids.push(record.id);
            while ids.len() > MAX_RUNS {
                let oldest = ids.remove(0);
                self.forget(oldest).await;
            }
            self.write_index(&ids).await?;
        }
        Ok(())
    }

    pub async fn save_weights(&self, id: u64, bytes: &[u8]) -> Result<(), RunLogError> {
        Ok(self.cache.put(&weights_key(id), bytes).await?)
    }

    pub async fn weights(&self, id: u64) -> Result<Vec<u8>, RunLogError> {
        self.cache
            .get(&weights_key(id))
            .await
            .ok_or(RunLogError::WeightsGone)
    }

    pub async fn delete(&self, id: u64) -> Result<(), RunLogError> {
        let ids: Vec<u64> = self.ids().await.into_iter().filter(|&i| i != id).collect();
        self.write_index(&ids).await?;
        self.forget(id).await;
        Ok(())
    }

    /// The record an earlier page's one saved run belonged to, read once: it is let go.
    pub async fn take_legacy_current(&self) -> Option<u64> {
        let bytes = self.cache.get(LEGACY_CURRENT_KEY).await?;
        let _ = self.cache.delete(LEGACY_CURRENT_KEY).await;
        serde_json::from_slice(&bytes).ok()
    }

    async fn write_index(&self, ids: &[u64]) -> Result<(), RunLogError> {
        let json = serde_json::to_vec(ids)?;
        Ok(self.cache.put(INDEX_KEY, &json).await?)
    }

    async fn forget(&self, id: u64) {
        let _ = self.cache.delete(&record_key(id)).await;
        let _ = self.cache.delete(&weights_key(id)).await;
        let _ = self.cache.delete(&checkpoint_key(id)).await;
    }
}
