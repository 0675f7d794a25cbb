//! The runs in the browser's database (IndexedDB, `vitlab-runs`): records, checkpoints and
//! weights in object stores of their own, and the ids of deleted runs, so that every change
//! is one transaction (`run_store` has the rules). Through `idb`: of the three crates made for
//! it, `indexed_db_futures` brings a dozen proc-macro crates (syn 1 among them) to build and
//! `rexie` is a layer over `idb` that hides the transaction we need to hold across a read and
//! a write; `idb` maps the database's own types one to one over `web-sys`, and its futures
//! keep a transaction alive across the read that decides a write.
//!
//! What the database holds is read as hostile: a record that does not parse, is larger than
//! any record the page writes, or is filed under another id is left out.

use std::rc::Rc;

use idb::{Database, DatabaseEvent, ObjectStoreParams, TransactionMode};
use js_sys::Uint8Array;
use wasm_bindgen::{JsCast, JsValue};

use crate::run_record::{MAX_RUNS, RunRecord};
use crate::run_store::{Keeping, MAX_RUN_ID, RunId, RunStore, StoreError, continues};

use super::databases::{DatabaseNotice, DbFailure, finish, open_database};

const NAME: &str = "vitlab-runs";
/// 2 since keepings name the revision they continue from: a page from before (version 1)
/// cannot open the database, so it never keeps without naming its base; an open tab of such a
/// page is told, when a newer page opens it, that it must be reloaded.
const VERSION: u32 = 2;
const RECORDS: &str = "records";
const CHECKPOINTS: &str = "checkpoints";
const WEIGHTS: &str = "weights";
/// Ids of deleted runs, never given again; and, under a string key, the mark that the runs of
/// earlier pages were moved in.
const DELETED: &str = "deleted";
const OLD_STORES_MOVED: &str = "old-stores-moved";
pub use crate::run_record::MAX_RECORD_BYTES;
/// A global only a test sets: the milliseconds each keeping waits before it writes, to hold
/// open the window between a worker's save and its landing.
const TEST_DELAY: &str = "vitlabTestSaveDelayMs";

/// A run kept by an earlier page: its record, checkpoint and weights.
pub type OldRun = (RunRecord, Option<Vec<u8>>, Option<Vec<u8>>);

/// The runs' database; clones share one connection.
#[derive(Clone)]
pub struct RunDb {
    db: std::rc::Rc<Database>,
}

impl From<DbFailure> for StoreError {
    fn from(failure: DbFailure) -> Self {
        match failure {
            DbFailure::Full => Self::Full,
            DbFailure::Failed(why) => Self::Failed(why),
        }
    }
}

fn failed(error: impl std::fmt::Display) -> StoreError {
    DbFailure::of(error).into()
}

fn key(id: RunId) -> JsValue {
    JsValue::from_f64(id as f64)
}

/// The most a checkpoint of a model the page can build takes: its weights and AdamW's two
/// moments in f32, and room for its header. Larger bytes in the database are not read into
/// memory at all (hostile, or not the page's).
const MAX_STORED_BYTES: u64 = crate::model::Budget::PAGE.max_params * 3 * 4 + (16 << 20);

fn bytes_of(value: JsValue) -> Option<Vec<u8>> {
    let array = value.dyn_into::<Uint8Array>().ok()?;
    (u64::from(array.length()) <= MAX_STORED_BYTES).then(|| array.to_vec())
}

fn record_of(id: RunId, value: JsValue) -> Option<RunRecord> {
    // Measured before it is copied in (in UTF-16 units, then in bytes).
    let text = value.dyn_into::<js_sys::JsString>().ok()?;
    if usize::try_from(text.length()).map_or(true, |units| units > MAX_RECORD_BYTES) {
        return None;
    }
    let json = String::from(text);
    if json.len() > MAX_RECORD_BYTES {
        return None;
    }
    serde_json::from_str::<RunRecord>(&json)
        .ok()
        .filter(|record| record.id == id)
}

/// The record as JSON no larger than it may be read back (see [`RunRecord::to_kept_json`]).
pub fn record_json(record: &RunRecord) -> Result<String, StoreError> {
    record
        .to_kept_json()
        .map_err(|too_large| StoreError::Failed(too_large.to_string()))
}

async fn test_delay() {
    let delay = js_sys::Reflect::get(&js_sys::global(), &TEST_DELAY.into())
        .ok()
        .and_then(|value| value.as_f64())
        .filter(|ms| ms.is_finite() && *ms > 0.0);
    if let Some(ms) = delay {
        super::sleep_ms(ms.min(60_000.0) as u32).await;
    }
}

impl RunDb {
    /// The database, made at its first use; `NoStorage` where the browser has none for the
    /// page (some private windows, a sandboxed frame).
    pub async fn open(said: Rc<dyn Fn(DatabaseNotice)>) -> Result<Self, StoreError> {
        let upgrade = |event: idb::event::VersionChangeEvent| {
            let Ok(db) = event.database() else { return };
            let existing = db.store_names();
            for name in [RECORDS, CHECKPOINTS, WEIGHTS, DELETED] {
                if !existing.iter().any(|e| e == name) {
                    let _ = db.create_object_store(name, ObjectStoreParams::new());
                }
            }
        };
        let db = open_database(NAME, VERSION, upgrade, said)
            .await
            .ok_or(StoreError::NoStorage)?;
        Ok(Self {
            db: std::rc::Rc::new(db),
        })
    }

    fn transaction(
        &self,
        stores: &[&str],
        mode: TransactionMode,
    ) -> Result<idb::Transaction, StoreError> {
        self.db.transaction(stores, mode).map_err(failed)
    }

    async fn get(&self, store: &str, id: RunId) -> Result<Option<JsValue>, StoreError> {
        let transaction = self.transaction(&[store], TransactionMode::ReadOnly)?;
        let store = transaction.object_store(store).map_err(failed)?;
        store.get(key(id)).map_err(failed)?.await.map_err(failed)
    }

    /// Whether the runs of earlier pages were moved in already (the mark [`RunDb::import`]
    /// leaves in the same transaction as the move).
    pub async fn old_stores_moved(&self) -> Result<bool, StoreError> {
        let transaction = self.transaction(&[DELETED], TransactionMode::ReadOnly)?;
        Ok(
            get(&transaction, DELETED, &JsValue::from_str(OLD_STORES_MOVED))
                .await?
                .is_some(),
        )
    }

    /// Runs kept by earlier pages, moved in once (`run_migration`): each record with its
    /// checkpoint and weights, and the mark that says the move is done, in one transaction; a
    /// run kept already, or deleted, is left.
    pub async fn import(&self, runs: Vec<OldRun>) -> Result<usize, StoreError> {
        let transaction = self.transaction(
            &[RECORDS, CHECKPOINTS, WEIGHTS, DELETED],
            TransactionMode::ReadWrite,
        )?;
        let mut moved = 0;
        let done = async {
            for (mut record, checkpoint, weights) in runs {
                let id = key(record.id);
                if get(&transaction, RECORDS, &id).await?.is_some()
                    || get(&transaction, DELETED, &id).await?.is_some()
                {
                    continue;
                }
                record.has_checkpoint = checkpoint.is_some();
                record.has_weights = weights.is_some();
                put_record(&transaction, &record).await?;
                put_bytes(&transaction, CHECKPOINTS, &id, checkpoint).await?;
                put_bytes(&transaction, WEIGHTS, &id, weights).await?;
                moved += 1;
            }
            // With the runs, or not at all: a load after a crash before the old stores went
            // finds the mark, and moves nothing again (a run deleted meanwhile stays deleted).
            let marks = transaction.object_store(DELETED).map_err(failed)?;
            marks
                .put(&JsValue::TRUE, Some(&JsValue::from_str(OLD_STORES_MOVED)))
                .map_err(failed)?
                .await
                .map(drop)
                .map_err(failed)
        }
        .await;
        finish(transaction, RECORDS, done).await?;
        Ok(moved)
    }
}

/// Value `id` of store `name` in `transaction`.
async fn get(
    transaction: &idb::Transaction,
    name: &str,
    id: &JsValue,
) -> Result<Option<JsValue>, StoreError> {
    let store = transaction.object_store(name).map_err(failed)?;
    store.get(id.clone()).map_err(failed)?.await.map_err(failed)
}

async fn put_record(transaction: &idb::Transaction, record: &RunRecord) -> Result<(), StoreError> {
    let json = JsValue::from_str(&record_json(record)?);
    let store = transaction.object_store(RECORDS).map_err(failed)?;
    store
        .put(&json, Some(&key(record.id)))
        .map_err(failed)?
        .await
        .map(drop)
        .map_err(failed)
}

/// `bytes` under `id` in store `name`, when there are bytes.
async fn put_bytes(
    transaction: &idb::Transaction,
    name: &str,
    id: &JsValue,
    bytes: Option<Vec<u8>>,
) -> Result<(), StoreError> {
    let Some(bytes) = bytes else { return Ok(()) };
    let store = transaction.object_store(name).map_err(failed)?;
    store
        .put(&Uint8Array::from(bytes.as_slice()), Some(id))
        .map_err(failed)?
        .await
        .map(drop)
        .map_err(failed)
}

async fn delete_from(
    transaction: &idb::Transaction,
    name: &str,
    id: &JsValue,
) -> Result<(), StoreError> {
    let store = transaction.object_store(name).map_err(failed)?;
    store
        .delete(id.clone())
        .map_err(failed)?
        .await
        .map_err(failed)
}

impl RunStore for RunDb {
    async fn create(
        &self,
        mut record: RunRecord,
        checkpoint: Option<Vec<u8>>,
    ) -> Result<(), StoreError> {
        let transaction =
            self.transaction(&[RECORDS, CHECKPOINTS, DELETED], TransactionMode::ReadWrite)?;
        let done = async {
            let id = key(record.id);
            if get(&transaction, RECORDS, &id).await?.is_some()
                || get(&transaction, DELETED, &id).await?.is_some()
            {
                return Err(StoreError::Taken(record.id));
            }
            record.has_checkpoint = checkpoint.is_some();
            record.has_weights = false;
            record.revision = 1;
            put_record(&transaction, &record).await?;
            put_bytes(&transaction, CHECKPOINTS, &id, checkpoint).await
        }
        .await;
        finish(transaction, RECORDS, done).await
    }

    async fn keep(&self, keeping: Keeping) -> Result<u64, StoreError> {
        test_delay().await;
        let transaction =
            self.transaction(&[RECORDS, CHECKPOINTS, WEIGHTS], TransactionMode::ReadWrite)?;
        let done = async {
            let mut record = keeping.record;
            let id = key(record.id);
            // Read and written in one transaction: a delete lands wholly before or after it.
            let old = get(&transaction, RECORDS, &id).await?;
            let Some(old) = old.and_then(|value| record_of(record.id, value)) else {
                return Err(StoreError::Gone(record.id));
            };
            // A tab whose copy is not the stored one writes nothing (another tab moved it).
            continues(&old, keeping.base)?;
            record.has_checkpoint = old.has_checkpoint || keeping.checkpoint.is_some();
            record.has_weights = old.has_weights || keeping.weights.is_some();
            record.revision = keeping.base.saturating_add(1);
            put_record(&transaction, &record).await?;
            put_bytes(&transaction, CHECKPOINTS, &id, keeping.checkpoint).await?;
            put_bytes(&transaction, WEIGHTS, &id, keeping.weights).await?;
            Ok(record.revision)
        }
        .await;
        finish(transaction, RECORDS, done).await
    }

    async fn delete(&self, id: RunId) -> Result<(), StoreError> {
        let transaction = self.transaction(
            &[RECORDS, CHECKPOINTS, WEIGHTS, DELETED],
            TransactionMode::ReadWrite,
        )?;
        let done = async {
            let id = key(id);
            for name in [RECORDS, CHECKPOINTS, WEIGHTS] {
                delete_from(&transaction, name, &id).await?;
            }
            let deleted = transaction.object_store(DELETED).map_err(failed)?;
            deleted
                .put(&JsValue::TRUE, Some(&id))
                .map_err(failed)?
                .await
                .map(drop)
                .map_err(failed)
        }
        .await;
        finish(transaction, RECORDS, done).await
    }

    async fn records(&self) -> Result<Vec<RunRecord>, StoreError> {
        let transaction = self.transaction(&[RECORDS], TransactionMode::ReadOnly)?;
        let store = transaction.object_store(RECORDS).map_err(failed)?;
        let limit = u32::try_from(MAX_RUNS).unwrap_or(u32::MAX);
        let keys = store
            .get_all_keys(None, Some(limit))
            .map_err(failed)?
            .await
            .map_err(failed)?;
        let values = store
            .get_all(None, Some(limit))
            .map_err(failed)?
            .await
            .map_err(failed)?;
        let mut records: Vec<RunRecord> = keys
            .into_iter()
            .zip(values)
            .filter_map(|(key, value)| {
                let id = key
                    .as_f64()
                    .filter(|id| id.fract() == 0.0 && (0.0..=MAX_RUN_ID as f64).contains(id))?;
                record_of(id as RunId, value)
            })
            .collect();
        records.sort_by_key(|r| (r.started_ms(), r.id));
        Ok(records)
    }

    async fn record(&self, id: RunId) -> Result<Option<RunRecord>, StoreError> {
        Ok(self
            .get(RECORDS, id)
            .await?
            .and_then(|value| record_of(id, value)))
    }

    async fn checkpoint(&self, id: RunId) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.get(CHECKPOINTS, id).await?.and_then(bytes_of))
    }

    async fn weights(&self, id: RunId) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.get(WEIGHTS, id).await?.and_then(bytes_of))
    }

    async fn forget_checkpoint(&self, id: RunId, base: u64) -> Result<(), StoreError> {
        let transaction = self.transaction(&[RECORDS, CHECKPOINTS], TransactionMode::ReadWrite)?;
        let done = async {
            let key = key(id);
            let old = get(&transaction, RECORDS, &key).await?;
            if let Some(mut record) = old.and_then(|value| record_of(id, value)) {
                // Another tab kept a good one since this one was found wanting: it stays.
                continues(&record, base)?;
                record.has_checkpoint = false;
                record.revision = base.saturating_add(1);
                put_record(&transaction, &record).await?;
            }
            delete_from(&transaction, CHECKPOINTS, &key).await
        }
        .await;
        finish(transaction, RECORDS, done).await
    }
}

/// Space the page's storage uses and may use, in bytes (`navigator.storage.estimate()`).
pub async fn storage_estimate() -> Option<(f64, f64)> {
    let storage = web_sys::window()?.navigator().storage();
    let estimate = wasm_bindgen_futures::JsFuture::from(storage.estimate().ok()?)
        .await
        .ok()?;
    let estimate: web_sys::StorageEstimate = estimate.unchecked_into();
    Some((estimate.get_usage()?, estimate.get_quota()?))
}

/// Asks the browser not to evict the page's storage under pressure; whether it agreed. Asked
/// once a page (a browser may put the question to its user): every later call, from the runs
/// or the digits, awaits that one answer.
pub async fn ask_to_persist() -> bool {
    use futures::FutureExt;
    type Asked = futures::future::Shared<futures::future::LocalBoxFuture<'static, bool>>;
    thread_local! {
        static ASKED: std::cell::RefCell<Option<Asked>> = const { std::cell::RefCell::new(None) };
    }
    let asked = ASKED.with(|asked| {
        asked
            .borrow_mut()
            .get_or_insert_with(|| ask_the_browser_to_persist().boxed_local().shared())
            .clone()
    });
    asked.await
}

async fn ask_the_browser_to_persist() -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    let Ok(asked) = window.navigator().storage().persist() else {
        return false;
    };
    wasm_bindgen_futures::JsFuture::from(asked)
        .await
        .ok()
        .and_then(|answer| answer.as_bool())
        .unwrap_or(false)
}
