//! How the page keeps its runs, as rules over two small traits: a [`RunStore`] (the browser's
//! database in the page, `web::run_db`; [`memory`] in the tests) and [`RunLocks`] (Web Locks
//! in the page), with the tab's own memory of its run ([`TabMemory`], `sessionStorage`).
//! [`Keeper`] is the one owner of the tab's current run. Pure: the tests drive two tabs, a
//! store and the locks through every interleaving of saves, deletes, reloads, pauses, stops
//! and starts (tests/native/run_store.rs).
//!
//! The rules:
//! - every change is one transaction: a delete takes the record, its checkpoint and its
//!   weights together; a keeping of a run whose record is gone is refused inside the same
//!   transaction, so nothing deleted comes back;
//! - a run is in the store and in the tab's memory from its Start, before its first step;
//! - run ids are drawn at random, and a drawn id that is taken is drawn again;
//! - a run's lock is held while it trains or is paused, and let go when it stops, finishes,
//!   is let go (Reset) or deleted;
//! - every keeping names the revision it continues from, and the store refuses, in the same
//!   transaction, one whose base is not the stored revision: a tab whose copy of a run is
//!   stale (another tab continued and kept it meanwhile) writes nothing, and a Resume after a
//!   Stop goes on from the stored checkpoint when another tab moved the run.

mod header;
mod keeper;
pub mod memory;

pub use header::{HeaderError, read_header};
pub use keeper::{
    Current, DigitsForgotten, GoOn, Keeper, KeeperError, Kept, Rest, StartRefused, Status,
};

use crate::run_record::RunRecord;

/// A run's name in the store, in the tab's memory and in its lock: drawn at random.
pub type RunId = u64;

/// Ids are drawn below 2^53, so that JavaScript (the database's keys, the page's numbers)
/// holds them exactly.
pub const MAX_RUN_ID: RunId = (1 << 53) - 1;

/// The short name a person reads: `#` and the id's last four digits.
pub fn short_name(id: RunId) -> String {
    format!("#{:04}", id % 10_000)
}

/// What one keeping of a run writes, in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct Keeping {
    /// The record's revision this keeping continues from: the store refuses it with
    /// [`StoreError::Moved`] unless that is the stored revision.
    pub base: u64,
    pub record: RunRecord,
    /// The run's checkpoint (weights, optimiser moments, state), when this keeping has one.
    pub checkpoint: Option<Vec<u8>>,
    /// The run's weights as a weights file, when this keeping has them.
    pub weights: Option<Vec<u8>>,
}

/// The rule every store keeps, in the transaction of the write: a write that names `base`
/// continues `stored` only where `stored` is at that revision; otherwise another tab moved the
/// run since, and the write is refused ([`StoreError::Moved`]).
pub fn continues(stored: &RunRecord, base: u64) -> Result<(), StoreError> {
    if stored.revision != base {
        return Err(StoreError::Moved {
            id: stored.id,
            step: stored.step,
        });
    }
    Ok(())
}

/// Why the store did not do what it was asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    #[error("this browser gives the page no database, so runs are not kept")]
    NoStorage,
    #[error("run {} was deleted, so it is no longer kept", short_name(*.0))]
    Gone(RunId),
    #[error("run id {0} is taken")]
    Taken(RunId),
    /// The stored run is not the one this tab continues from: another tab continued it and
    /// kept it since (at `step`).
    #[error(
        "run {} was continued in another tab (step {step}): this tab stopped; Continue from the table goes on from there",
        short_name(*id)
    )]
    Moved { id: RunId, step: usize },
    #[error(
        "the browser's storage for this page is full: this save was not kept, the run's last one still is"
    )]
    Full,
    /// The database's own words.
    #[error("the browser's database failed: {0}")]
    Failed(String),
}

/// Why a run's weights were not read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WeightsError {
    #[error("this run's weights are no longer in the browser")]
    Gone,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The runs, their checkpoints and their weights. Each call is one transaction.
#[allow(async_fn_in_trait)]
pub trait RunStore {
    /// A new run's record (with the checkpoint it starts from, if it has one), at revision
    /// 1; refused with [`StoreError::Taken`] where a run of that id is kept or was deleted (a
    /// late save of the deleted run must never land in a new one).
    async fn create(
        &self,
        record: RunRecord,
        checkpoint: Option<Vec<u8>>,
    ) -> Result<(), StoreError>;
    /// Writes the record and whatever else `keeping` holds, as the revision after
    /// `keeping.base`, which it returns; refused with [`StoreError::Gone`] where the run's
    /// record is not there, and with [`StoreError::Moved`] where its stored revision is not
    /// `keeping.base`. The store, not the caller, sets the record's `has_checkpoint`,
    /// `has_weights` and `revision`.
    async fn keep(&self, keeping: Keeping) -> Result<u64, StoreError>;
    /// The record, its checkpoint and its weights, together; the id is never given again.
    async fn delete(&self, id: RunId) -> Result<(), StoreError>;
    /// Every record, oldest first.
    async fn records(&self) -> Result<Vec<RunRecord>, StoreError>;
    async fn record(&self, id: RunId) -> Result<Option<RunRecord>, StoreError>;
    async fn checkpoint(&self, id: RunId) -> Result<Option<Vec<u8>>, StoreError>;
    async fn weights(&self, id: RunId) -> Result<Option<Vec<u8>>, StoreError>;
    /// The checkpoint goes (one that cannot be resumed); the record and its weights stay.
    /// Refused with [`StoreError::Moved`] unless the stored revision is `base` (the one whose
    /// checkpoint was found wanting: another tab may have kept a good one since).
    async fn forget_checkpoint(&self, id: RunId, base: u64) -> Result<(), StoreError>;
}

/// Run `0` is held by another tab.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "run {} is being trained in another tab: go on with it there, or close that tab first",
    short_name(*.0)
)]
pub struct HeldElsewhere(pub RunId);

/// Why a run's lock was not had.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LockError {
    #[error(transparent)]
    HeldElsewhere(#[from] HeldElsewhere),
    /// The browser refused the request itself (an opaque origin, a document not fully
    /// active): its words.
    #[error("the browser refused the run's lock: {0}")]
    Refused(String),
}

/// One tab at a time per run.
#[allow(async_fn_in_trait)]
pub trait RunLocks {
    /// Let go when dropped.
    type Hold;
    /// Run `id`'s lock, unless another tab holds it; `None` where there are no locks to take
    /// (the run goes on unguarded).
    async fn hold(&self, id: RunId) -> Result<Option<Self::Hold>, LockError>;
}

/// The run this tab trains, remembered across its reloads and by no other tab.
pub trait TabMemory {
    fn run(&self) -> Option<RunId>;
    fn set_run(&self, id: RunId);
    fn forget_run(&self);
}

/// What the page says of the runs that kept a person's digits (or the `one` digit) once they
/// deleted them: each run's fate ([`Keeper::forget_digits`]), a sentence for each kind of
/// fate, the runs named; `None` where no run kept them.
pub fn said_of_forgotten(
    runs: &[(RunId, Result<DigitsForgotten, KeeperError>)],
    one: bool,
) -> Option<String> {
    let them = if one { "it" } else { "them" };
    let names = |fate: &dyn Fn(&Result<DigitsForgotten, KeeperError>) -> bool| {
        let named: Vec<String> = runs
            .iter()
            .filter(|(_, result)| fate(result))
            .map(|(id, _)| short_name(*id))
            .collect();
        (!named.is_empty()).then(|| (named.len() > 1, named.join(", ")))
    };
    let mut said = Vec::new();
    let lost_checkpoint = |r: &Result<DigitsForgotten, KeeperError>| {
        matches!(
            r,
            Ok(DigitsForgotten::CheckpointDeleted | DigitsForgotten::LetGoHere)
        )
    };
    if let Some((many, named)) = names(&lost_checkpoint) {
        let (runs, their, they) = if many {
            ("Runs", "their checkpoints", "they keep their")
        } else {
            ("Run", "its checkpoint", "it keeps its")
        };
        said.push(format!(
            "{runs} {named} fine-tuned on {them}: {their} went with {them} ({they} curves and weights, and can no longer be continued)."
        ));
    }
    if let Some((_, named)) = names(&|r| *r == Ok(DigitsForgotten::LetGoHere)) {
        said.push(format!("The training panel let {named} go."));
    }
    if let Some((_, named)) = names(&|r| matches!(r, Err(KeeperError::HeldElsewhere(_)))) {
        said.push(format!(
            "Still kept by {named}, fine-tuning on {them} in another tab: stop it there and delete it from the runs table."
        ));
    }
    for (id, result) in runs {
        if let Err(error) = result
            && !matches!(error, KeeperError::HeldElsewhere(_))
        {
            said.push(format!("Still kept by run {}: {error}.", short_name(*id)));
        }
    }
    (!said.is_empty()).then(|| said.join(" "))
}
