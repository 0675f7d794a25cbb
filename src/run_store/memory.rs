//! The store, the locks and the tab's memory in memory: what the native tests keep runs in.
//! Each call is whole before it returns, as a transaction is.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use super::{HeldElsewhere, Keeping, LockError, RunId, RunLocks, RunStore, StoreError, TabMemory};
use crate::run_record::RunRecord;

#[derive(Debug, Default)]
struct Stores {
    records: BTreeMap<RunId, RunRecord>,
    checkpoints: BTreeMap<RunId, Vec<u8>>,
    weights: BTreeMap<RunId, Vec<u8>>,
    deleted: BTreeSet<RunId>,
}

/// A run store in memory; clones share it.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    stores: Rc<RefCell<Stores>>,
    /// Checkpoints and weights larger than this are refused as a full disk refuses them.
    quota: Option<usize>,
    /// While set, every read of a record or a checkpoint fails, as a browser's database may.
    reads_fail: Rc<Cell<bool>>,
}

impl MemoryStore {
    /// Reads of records and checkpoints fail from now on (`true`), or work again.
    pub fn fail_reads(&self, fail: bool) {
        self.reads_fail.set(fail);
    }

    fn read(&self) -> Result<(), StoreError> {
        if self.reads_fail.get() {
            return Err(StoreError::Failed("a read that failed".into()));
        }
        Ok(())
    }

    /// A store that refuses checkpoints and weights over `bytes`.
    pub fn with_quota(bytes: usize) -> Self {
        Self {
            quota: Some(bytes),
            ..Self::default()
        }
    }
}

impl RunStore for MemoryStore {
    async fn create(
        &self,
        mut record: RunRecord,
        checkpoint: Option<Vec<u8>>,
    ) -> Result<(), StoreError> {
        let mut stores = self.stores.borrow_mut();
        if stores.records.contains_key(&record.id) || stores.deleted.contains(&record.id) {
            return Err(StoreError::Taken(record.id));
        }
        record.has_checkpoint = checkpoint.is_some();
        record.has_weights = false;
        record.revision = 1;
        if let Some(checkpoint) = checkpoint {
            stores.checkpoints.insert(record.id, checkpoint);
        }
        stores.records.insert(record.id, record);
        Ok(())
    }

    async fn keep(&self, keeping: Keeping) -> Result<u64, StoreError> {
        let mut stores = self.stores.borrow_mut();
        let id = keeping.record.id;
        let Some(old) = stores.records.get(&id) else {
            return Err(StoreError::Gone(id));
        };
        super::continues(old, keeping.base)?;
        let too_big = |bytes: &Option<Vec<u8>>| {
            bytes
                .as_ref()
                .zip(self.quota)
                .is_some_and(|(b, quota)| b.len() > quota)
        };
        if too_big(&keeping.checkpoint) || too_big(&keeping.weights) {
            return Err(StoreError::Full);
        }
        let mut record = keeping.record;
        record.has_checkpoint = old.has_checkpoint || keeping.checkpoint.is_some();
        record.has_weights = old.has_weights || keeping.weights.is_some();
        record.revision = keeping.base.saturating_add(1);
        let revision = record.revision;
        if let Some(checkpoint) = keeping.checkpoint {
            stores.checkpoints.insert(id, checkpoint);
        }
        if let Some(weights) = keeping.weights {
            stores.weights.insert(id, weights);
        }
        stores.records.insert(id, record);
        Ok(revision)
    }

    async fn delete(&self, id: RunId) -> Result<(), StoreError> {
        let mut stores = self.stores.borrow_mut();
        stores.records.remove(&id);
        stores.checkpoints.remove(&id);
        stores.weights.remove(&id);
        stores.deleted.insert(id);
        Ok(())
    }

    async fn records(&self) -> Result<Vec<RunRecord>, StoreError> {
        let mut records: Vec<RunRecord> = self.stores.borrow().records.values().cloned().collect();
        records.sort_by_key(|r| (r.started_ms(), r.id));
        Ok(records)
    }

    async fn record(&self, id: RunId) -> Result<Option<RunRecord>, StoreError> {
        self.read()?;
        Ok(self.stores.borrow().records.get(&id).cloned())
    }

    async fn checkpoint(&self, id: RunId) -> Result<Option<Vec<u8>>, StoreError> {
        self.read()?;
        Ok(self.stores.borrow().checkpoints.get(&id).cloned())
    }

    async fn weights(&self, id: RunId) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.stores.borrow().weights.get(&id).cloned())
    }

    async fn forget_checkpoint(&self, id: RunId, base: u64) -> Result<(), StoreError> {
        let mut stores = self.stores.borrow_mut();
        if let Some(record) = stores.records.get_mut(&id) {
            super::continues(record, base)?;
            record.has_checkpoint = false;
            record.revision = base.saturating_add(1);
        }
        stores.checkpoints.remove(&id);
        Ok(())
    }
}

/// Locks in memory, shared by the tabs that clone them.
#[derive(Debug, Clone, Default)]
pub struct MemoryLocks {
    held: Rc<RefCell<BTreeSet<RunId>>>,
    /// While set, every request is refused, as a browser refuses one from an opaque origin.
    refused: Rc<Cell<bool>>,
}

impl MemoryLocks {
    /// The runs whose lock some tab holds.
    pub fn held(&self) -> BTreeSet<RunId> {
        self.held.borrow().clone()
    }

    /// Every request is refused from now on (`true`), or taken again.
    pub fn refuse(&self, refuse: bool) {
        self.refused.set(refuse);
    }
}

/// A lock held in memory, let go when dropped.
#[derive(Debug)]
pub struct MemoryHold {
    id: RunId,
    held: Rc<RefCell<BTreeSet<RunId>>>,
}

impl Drop for MemoryHold {
    fn drop(&mut self) {
        self.held.borrow_mut().remove(&self.id);
    }
}

impl RunLocks for MemoryLocks {
    type Hold = MemoryHold;

    async fn hold(&self, id: RunId) -> Result<Option<MemoryHold>, LockError> {
        if self.refused.get() {
            return Err(LockError::Refused("the request was rejected".into()));
        }
        if !self.held.borrow_mut().insert(id) {
            return Err(HeldElsewhere(id).into());
        }
        Ok(Some(MemoryHold {
            id,
            held: self.held.clone(),
        }))
    }
}

/// A tab's memory of its run (`sessionStorage`): it outlives the tab's reloads.
#[derive(Debug, Clone, Default)]
pub struct MemoryTab {
    run: Rc<RefCell<Option<RunId>>>,
}

impl TabMemory for MemoryTab {
    fn run(&self) -> Option<RunId> {
        *self.run.borrow()
    }

    fn set_run(&self, id: RunId) {
        *self.run.borrow_mut() = Some(id);
    }

    fn forget_run(&self) {
        *self.run.borrow_mut() = None;
    }
}
