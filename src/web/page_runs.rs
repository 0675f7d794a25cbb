//! The page's run store: the browser's database, opened at its first use with the runs of
//! earlier pages moved in first (`run_migration`), then shared by every call.

use std::rc::Rc;

use futures::future::{FutureExt, LocalBoxFuture, Shared};

use crate::run_record::RunRecord;
use crate::run_store::{Keeping, RunId, RunStore, StoreError};

use super::databases::DatabaseNotice;
use super::run_db::RunDb;
use super::run_migration::move_old_runs;

type Opening = Shared<LocalBoxFuture<'static, Result<RunDb, StoreError>>>;

/// The database as the page's [`crate::run_store::Keeper`] uses it; clones share it.
#[derive(Clone)]
pub struct PageRuns {
    opening: Rc<Opening>,
}

impl PageRuns {
    /// The page's runs, `said` hearing what another tab's page asks of their database.
    pub fn new(said: Rc<dyn Fn(DatabaseNotice)>) -> Self {
        let opening = async move {
            let db = RunDb::open(said).await?;
            // A move that fails leaves the old runs where they are, for the next load.
            if let Err(error) = move_old_runs(&db).await {
                web_sys::console::warn_1(
                    &format!("runs of earlier pages not moved: {error}").into(),
                );
            }
            Ok(db)
        };
        Self {
            opening: Rc::new(opening.boxed_local().shared()),
        }
    }
}

impl PageRuns {
    async fn db(&self) -> Result<RunDb, StoreError> {
        (*self.opening).clone().await
    }
}

impl RunStore for PageRuns {
    async fn create(
        &self,
        record: RunRecord,
        checkpoint: Option<Vec<u8>>,
    ) -> Result<(), StoreError> {
        self.db().await?.create(record, checkpoint).await
    }

    async fn keep(&self, keeping: Keeping) -> Result<u64, StoreError> {
        self.db().await?.keep(keeping).await
    }

    async fn delete(&self, id: RunId) -> Result<(), StoreError> {
        self.db().await?.delete(id).await
    }

    async fn records(&self) -> Result<Vec<RunRecord>, StoreError> {
        self.db().await?.records().await
    }

    async fn record(&self, id: RunId) -> Result<Option<RunRecord>, StoreError> {
        self.db().await?.record(id).await
    }

    async fn checkpoint(&self, id: RunId) -> Result<Option<Vec<u8>>, StoreError> {
        self.db().await?.checkpoint(id).await
    }

    async fn weights(&self, id: RunId) -> Result<Option<Vec<u8>>, StoreError> {
        self.db().await?.weights(id).await
    }

    async fn forget_checkpoint(&self, id: RunId, base: u64) -> Result<(), StoreError> {
        self.db().await?.forget_checkpoint(id, base).await
    }
}
