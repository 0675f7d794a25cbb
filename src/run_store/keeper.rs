//! The one owner of the tab's current run: its id, its lock and where it stands. The page's
//! training panel asks it to start, continue, keep, let go and delete runs; it writes the
//! store, takes and lets go the lock and the tab's memory of its run, so that none of them
//! can disagree with the others.

use std::cell::RefCell;
use std::rc::Rc;

use super::{
    HeaderError, HeldElsewhere, Keeping, LockError, RunId, RunLocks, RunStore, StoreError,
    TabMemory, short_name,
};
use crate::protocol::RunState;
use crate::run_record::RunRecord;

/// Draws of a fresh id before a start gives up (each draw collides with odds of 2^-53 per
/// kept run: a second draw is already a sign of a broken generator).
const DRAWS: usize = 4;

/// Where the current run stands, as far as keeping it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Started, continued or resumed: its lock is held.
    Training,
    /// Its pause is kept; its lock is still held (Resume goes on here).
    Paused,
    /// Stopped or finished and kept: its lock is let go; Resume takes it again.
    Ended,
}

/// What a Resume does ([`Keeper::go_on`]).
#[derive(Debug, Clone, PartialEq)]
pub enum GoOn {
    /// The worker goes on with the run it holds: it is the stored one.
    Here,
    /// Another tab continued and kept the run since this tab stopped it: it goes on from the
    /// stored checkpoint (or, without one, from its plan), never from this tab's copy.
    FromStore {
        record: Box<RunRecord>,
        checkpoint: Option<Vec<u8>>,
    },
    /// Its rest is still being kept: nothing to resume yet.
    NotYet,
}

/// What became of a run that kept a person's digits once they deleted them
/// ([`Keeper::forget_digits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DigitsForgotten {
    /// Its checkpoint, which held them, is gone; its curves and weights stay, and it can no
    /// longer be continued.
    CheckpointDeleted,
    /// As [`Self::CheckpointDeleted`], and it was this tab's run, which the tab let go: its
    /// worker, which holds the digits too, is to be stopped.
    LetGoHere,
    /// It was deleted meanwhile: nothing of it is left.
    Gone,
}

/// How a run came to rest, with the checkpoint that says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rest {
    Paused,
    Stopped,
    Finished,
}

impl Rest {
    /// The rest a run came to in `state`, if it is one.
    pub fn of(state: RunState) -> Option<Self> {
        match state {
            RunState::Paused => Some(Self::Paused),
            RunState::Stopped => Some(Self::Stopped),
            RunState::Finished => Some(Self::Finished),
            _ => None,
        }
    }
}

/// The tab's current run.
#[derive(Debug)]
pub struct Current<H> {
    pub id: RunId,
    pub status: Status,
    /// Its record as the page last kept it.
    pub record: RunRecord,
    /// Whether the store holds it (a store that refused its start keeps nothing of it).
    pub kept: bool,
    /// The stored revision this tab's copy continues from (see [`super::Keeping::base`]).
    pub revision: u64,
    /// Made by [`Keeper::start`] and not yet begun by the worker: a start that ends before it
    /// begins leaves nothing behind ([`Keeper::abandon`]).
    fresh: bool,
    /// The tab's run before this one was started, which an abandoned start gives back.
    previous: Option<RunId>,
    /// A keeping of its rest (a pause, a stop, the end) has been asked and is not done: a
    /// Reset meanwhile leaves it to land ([`Keeper::parted`] does not let it go).
    rest_on_its_way: bool,
    /// The worker that trained it died ([`Keeper::worker_lost`]): no copy of it is left to go
    /// on with, so whatever rest is still being kept ends it.
    copy_lost: bool,
    hold: Option<H>,
}

/// Why the keeper did not do what it was asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KeeperError {
    #[error(transparent)]
    HeldElsewhere(#[from] HeldElsewhere),
    /// The browser refused the lock request itself: the run is not started.
    #[error("{0}")]
    LockRefused(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no free run id could be drawn")]
    NoFreeId,
    #[error("run {} is no longer kept in this browser", short_name(*.0))]
    NotKept(RunId),
}

/// Why the keeper did not take a new run (`crate::tab_session::Event::StartKept`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StartRefused {
    #[error("Not started: {0}.")]
    NotKept(KeeperError),
    #[error("The run file cannot be resumed: {0}.")]
    UnreadableFile(HeaderError),
    #[error("The run file was not taken: {0}.")]
    FileNotKept(KeeperError),
}

/// What came of a keeping ([`Keeper::keep`]), as the page acts on it: one outcome, matched
/// in one place (`crate::tab_session`).
#[derive(Debug, Clone, PartialEq)]
pub enum Kept {
    /// Written, or (`false`) nothing to write: the run is no longer this tab's.
    Done(bool),
    /// Another tab continued and kept the run since this tab's copy was taken
    /// ([`StoreError::Moved`]): this tab's copy is stale.
    Moved(StoreError),
    /// The run was deleted meanwhile.
    Gone(RunId),
    /// Not kept (a full disk, a failing database): the run's last keeping stands.
    Refused(KeeperError),
}

impl From<Result<bool, KeeperError>> for Kept {
    fn from(kept: Result<bool, KeeperError>) -> Self {
        match kept {
            Ok(written) => Self::Done(written),
            Err(KeeperError::Store(moved @ StoreError::Moved { .. })) => Self::Moved(moved),
            Err(KeeperError::Store(StoreError::Gone(run))) => Self::Gone(run),
            Err(error) => Self::Refused(error),
        }
    }
}

/// The tab's run keeping: a store, the locks, the tab's memory and the current run.
pub struct Keeper<S, L: RunLocks, T> {
    store: S,
    locks: L,
    tab: T,
    draw: Rc<dyn Fn() -> RunId>,
    current: Rc<RefCell<Option<Current<L::Hold>>>>,
    /// The run a Reset let go while it trained, whose rest may still be on its way (a Stop
    /// pressed just before): that rest is kept when it comes, under the lock held till then
    /// ([`Keeper::reset`], [`Keeper::parted`]).
    parting: Rc<RefCell<Option<Current<L::Hold>>>>,
    /// One keeping at a time, in the order they were asked: each names the revision the one
    /// before it left (two in flight at once would name the same, and the second would be
    /// refused as if another tab had moved the run).
    writing: Rc<futures::lock::Mutex<()>>,
}

impl<S: Clone, L: RunLocks + Clone, T: Clone> Clone for Keeper<S, L, T> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
            locks: self.locks.clone(),
            tab: self.tab.clone(),
            draw: self.draw.clone(),
            current: self.current.clone(),
            parting: self.parting.clone(),
            writing: self.writing.clone(),
        }
    }
}

impl<S: RunStore, L: RunLocks, T: TabMemory> Keeper<S, L, T> {
    /// `draw` gives a fresh random id at each call.
    pub fn new(store: S, locks: L, tab: T, draw: impl Fn() -> RunId + 'static) -> Self {
        Self {
            store,
            locks,
            tab,
            draw: Rc::new(draw),
            current: Rc::new(RefCell::new(None)),
            parting: Rc::new(RefCell::new(None)),
            writing: Rc::new(futures::lock::Mutex::new(())),
        }
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    /// The current run's id.
    pub fn current_id(&self) -> Option<RunId> {
        self.current.borrow().as_ref().map(|c| c.id)
    }

    pub fn status(&self) -> Option<Status> {
        self.current.borrow().as_ref().map(|c| c.status)
    }

    /// Whether this tab holds the current run's lock.
    pub fn holds_lock(&self) -> bool {
        self.current
            .borrow()
            .as_ref()
            .is_some_and(|c| c.hold.is_some())
    }

    /// The current run's record as last kept.
    pub fn record(&self) -> Option<RunRecord> {
        self.current.borrow().as_ref().map(|c| c.record.clone())
    }

    /// The run this tab had before a reload, if the store still keeps it: the page offers
    /// to continue it. One that was deleted meanwhile is forgotten.
    pub async fn offered(&self) -> Option<RunRecord> {
        let id = self.tab.run()?;
        match self.store.record(id).await {
            Ok(Some(record)) => Some(record),
            Ok(None) => {
                self.tab.forget_run();
                None
            }
            Err(_) => None,
        }
    }

    /// A new run, under a fresh id, with the record `make` gives for it (and the checkpoint
    /// it starts from, for a run file): in the store, in the tab's memory and locked before
    /// its first step. A store that refuses says why beside the id; the run goes on unkept.
    pub async fn start(
        &self,
        make: impl Fn(RunId) -> RunRecord,
        checkpoint: Option<Vec<u8>>,
    ) -> Result<(RunId, Option<StoreError>), KeeperError> {
        let previous = self.tab.run();
        self.let_go();
        for _ in 0..DRAWS {
            let id = (self.draw)();
            let hold = match self.locks.hold(id).await {
                Ok(hold) => hold,
                // Another tab holds this id: another is drawn.
                Err(LockError::HeldElsewhere(_)) => continue,
                Err(refused) => return Err(refused.into()),
            };
            let mut record = make(id);
            record.has_checkpoint = checkpoint.is_some();
            record.has_weights = false;
            let unkept = match self.store.create(record.clone(), checkpoint.clone()).await {
                Err(StoreError::Taken(_)) => continue,
                result => result.err(),
            };
            if unkept.is_none() {
                self.tab.set_run(id);
            }
            self.set_current(Current {
                id,
                status: Status::Training,
                record,
                kept: unkept.is_none(),
                // As the store creates it.
                revision: 1,
                fresh: true,
                previous,
                rest_on_its_way: false,
                copy_lost: false,
                hold,
            });
            return Ok((id, unkept));
        }
        Err(KeeperError::NoFreeId)
    }

    /// Run `id` goes on in this tab: its lock (unless another tab holds it), its record and
    /// its checkpoint if it has one (a run without one starts again from its plan, which its
    /// seed makes the same as its step 0).
    pub async fn continue_run(
        &self,
        id: RunId,
    ) -> Result<(RunRecord, Option<Vec<u8>>), KeeperError> {
        let own = self
            .current
            .borrow_mut()
            .as_mut()
            .filter(|c| c.id == id)
            .and_then(|c| c.hold.take());
        let owned = own.is_some();
        let hold = match own {
            Some(hold) => Some(hold),
            None => self.locks.hold(id).await?,
        };
        let hold = std::rc::Rc::new(std::cell::RefCell::new(hold));
        match self.take_over(id, hold.clone()).await {
            Ok(continued) => Ok(continued),
            Err(error) => {
                // A read that failed takes nothing from the tab: its own run keeps its lock
                // (paused or stopped as it was).
                if owned
                    && let Some(current) = self.current.borrow_mut().as_mut().filter(|c| c.id == id)
                {
                    current.hold = hold.borrow_mut().take();
                }
                Err(error)
            }
        }
    }

    /// Run `id`, whose lock `hold` is (where there are locks), becomes the tab's current run
    /// as the store keeps it: its record, at its stored revision, and its checkpoint.
    async fn take_over(
        &self,
        id: RunId,
        hold: std::rc::Rc<std::cell::RefCell<Option<L::Hold>>>,
    ) -> Result<(RunRecord, Option<Vec<u8>>), KeeperError> {
        let record = self.store.record(id).await?;
        let Some(mut record) = record else {
            if self.tab.run() == Some(id) {
                self.tab.forget_run();
            }
            return Err(KeeperError::NotKept(id));
        };
        let checkpoint = self.store.checkpoint(id).await?;
        record.has_checkpoint = checkpoint.is_some();
        self.tab.set_run(id);
        self.set_current(Current {
            id,
            status: Status::Training,
            record: record.clone(),
            kept: true,
            revision: record.revision,
            fresh: false,
            previous: None,
            rest_on_its_way: false,
            copy_lost: false,
            hold: hold.borrow_mut().take(),
        });
        Ok((record, checkpoint))
    }

    /// Keeps what the worker sent of run `run`: the record as `update` leaves it, and the
    /// checkpoint and weights if they came. A rest (a pause, a stop, the end) counts once
    /// it is kept; a stop or the end lets the lock go. Whether anything was written: nothing
    /// is for a run this tab no longer has (let go, deleted, another one started). A run
    /// deleted meanwhile (in another tab) is refused by the store and let go here, and so is
    /// one another tab continued and kept since this tab's copy was taken
    /// ([`StoreError::Moved`]): this tab's copy is stale, and writes nothing.
    pub async fn keep(
        &self,
        run: RunId,
        update: impl FnOnce(&mut RunRecord),
        (checkpoint, weights): (Option<Vec<u8>>, Option<Vec<u8>>),
        rest: Option<Rest>,
    ) -> Result<bool, KeeperError> {
        if self.current_id() != Some(run) {
            // Said before any wait, so that the worker's "idle", which may come meanwhile, leaves
            // the run to this rest; taken only in its turn, so that a keeping before it (whose
            // revision this one continues from) finds it.
            let waited_for = rest.is_some()
                && self
                    .parting
                    .borrow_mut()
                    .as_mut()
                    .filter(|p| p.id == run)
                    .map(|p| p.rest_on_its_way = true)
                    .is_some();
            let _turn = self.writing.lock().await;
            return match waited_for.then(|| self.take_parting(run, rest)).flatten() {
                Some(parting) => {
                    self.keep_parting(parting, update, (checkpoint, weights))
                        .await
                }
                None => Ok(false),
            };
        }
        if rest.is_some()
            && let Some(current) = self.current.borrow_mut().as_mut()
        {
            // Said before the wait for the turn: a Reset meanwhile leaves this rest to land.
            current.rest_on_its_way = true;
        }
        let _turn = self.writing.lock().await;
        if self.current_id() != Some(run) {
            // A Reset let the run go while this waited its turn: its rest still lands.
            return match self.take_parting(run, rest) {
                Some(parting) => {
                    self.keep_parting(parting, update, (checkpoint, weights))
                        .await
                }
                None => Ok(false),
            };
        }
        let (record, base) = {
            let mut current = self.current.borrow_mut();
            let Some(current) = current.as_mut().filter(|c| c.id == run) else {
                return Ok(false);
            };
            update(&mut current.record);
            if !current.kept {
                if let Some(rest) = rest {
                    current.rest(rest);
                }
                return Ok(false);
            }
            (current.record.clone(), current.revision)
        };
        let (with_checkpoint, with_weights) = (checkpoint.is_some(), weights.is_some());
        let result = self
            .store
            .keep(Keeping {
                base,
                record,
                checkpoint,
                weights,
            })
            .await;
        let is_current = self.current_id() == Some(run);
        if rest.is_some()
            && is_current
            && let Some(current) = self.current.borrow_mut().as_mut()
        {
            current.rest_on_its_way = false;
        }
        if let Ok(revision) = &result {
            // As the store set them, in the tab's run, or in the run a Reset let go meanwhile
            // (whose stop, still to come, continues from this revision).
            let target = if is_current {
                &self.current
            } else {
                &self.parting
            };
            if let Some(kept) = target.borrow_mut().as_mut().filter(|c| c.id == run) {
                kept.record.has_checkpoint |= with_checkpoint;
                kept.record.has_weights |= with_weights;
                kept.revision = *revision;
                kept.record.revision = *revision;
            }
        }
        if !is_current && rest.is_some() {
            // A Reset let the run go while its rest was being written: that rest has landed (or
            // been refused), nothing more of the run is to come, and its lock goes.
            let parted = self.take_parting(run, rest);
            drop(parted);
        }
        if let Err(StoreError::Gone(_) | StoreError::Moved { .. }) = result {
            if !is_current {
                // Let go in this tab already: nothing more to say.
                return Ok(false);
            }
            self.let_go();
        } else if let (true, Some(rest)) = (is_current, rest)
            && let Some(current) = self.current.borrow_mut().as_mut()
        {
            // Kept or refused (a full disk: its last keeping stands), the run rests: Resume
            // acts on it, never waiting for a keeping that will not come.
            current.rest(rest);
        }
        result.map(|_| true).map_err(KeeperError::from)
    }

    /// The worker came to `rest` on run `run` without a checkpoint to keep (making it failed
    /// in the worker, which said why): the run rests where its last keeping left it. A pause
    /// keeps its lock (Resume goes on with the worker's copy); a stop or the end lets it go.
    pub fn rested_unsaved(&self, run: RunId, rest: Rest) {
        if let Some(current) = self.current.borrow_mut().as_mut().filter(|c| c.id == run) {
            current.rest(rest);
        }
        // A Reset meanwhile: nothing of the run is on its way any more.
        let parted = self.take_parting(run, Some(rest));
        drop(parted);
    }

    /// The tab's training worker died: nothing more comes from it, and it holds no copy of any
    /// run to go on with. A start that never began leaves nothing behind (as
    /// [`Self::abandon`]); the run it trained or held paused ends where its last keeping left
    /// it, and its lock goes (Continue takes it again, in this tab or another), unless a rest
    /// that came before the death is still being kept, which ends it when it lands; a run a
    /// Reset let go has nothing more on its way ([`Self::parted`]). Whether a start was
    /// abandoned.
    pub async fn worker_lost(&self) -> Result<bool, KeeperError> {
        self.parted();
        let fresh = {
            let mut current = self.current.borrow_mut();
            let Some(current) = current.as_mut() else {
                return Ok(false);
            };
            current.copy_lost = true;
            if !current.fresh && !current.rest_on_its_way {
                current.end();
            }
            current.fresh.then_some(current.id)
        };
        match fresh {
            Some(run) => self.abandon(run, false).await,
            None => Ok(false),
        }
    }

    /// The run a Reset let go, if it is `run` and this is its rest (nothing else of it is kept).
    fn take_parting(&self, run: RunId, rest: Option<Rest>) -> Option<Current<L::Hold>> {
        let mut parting = self.parting.borrow_mut();
        match parting.as_ref() {
            Some(p) if p.id == run && rest.is_some() => parting.take(),
            _ => None,
        }
    }

    /// The rest of a run a Reset let go while it trained, kept as it came: under its own
    /// revision, with the lock the run held till now, which goes with it; the tab's memory and
    /// current run are left as they are.
    async fn keep_parting(
        &self,
        mut parting: Current<L::Hold>,
        update: impl FnOnce(&mut RunRecord),
        (checkpoint, weights): (Option<Vec<u8>>, Option<Vec<u8>>),
    ) -> Result<bool, KeeperError> {
        update(&mut parting.record);
        let keeping = Keeping {
            base: parting.revision,
            record: parting.record.clone(),
            checkpoint,
            weights,
        };
        let kept = self.store.keep(keeping).await;
        // Its lock goes only now, with the rest written (or refused: moved or deleted since).
        drop(parting);
        kept.map(|_| true).map_err(KeeperError::from)
    }

    /// The worker began run `run` (its device and data are up): from now on it is a run of
    /// its own, whatever becomes of it.
    pub fn began(&self, run: RunId) {
        if let Some(current) = self.current.borrow_mut().as_mut().filter(|c| c.id == run) {
            current.fresh = false;
        }
    }

    /// The start of run `run` ended before it began (no data, no device, a Stop or a Reset
    /// while it started): its record goes, as nothing was ever kept of it, and the tab's run
    /// is again the one it had before (unless `forget`, for a Reset). Whether it was such a
    /// start.
    pub async fn abandon(&self, run: RunId, forget: bool) -> Result<bool, KeeperError> {
        let abandoned = {
            let mut current = self.current.borrow_mut();
            match current.as_ref() {
                Some(c) if c.id == run && c.fresh => current.take(),
                _ => None,
            }
        };
        let Some(abandoned) = abandoned else {
            return Ok(false);
        };
        match abandoned.previous.filter(|_| !forget) {
            Some(previous) => self.tab.set_run(previous),
            None => self.tab.forget_run(),
        }
        let kept = abandoned.kept;
        drop(abandoned);
        if kept {
            self.store.delete(run).await?;
        }
        Ok(true)
    }

    /// Resume after a pause or a stop, once that rest is kept (before, the worker would
    /// resume a run whose rest is still to come). A paused run kept its lock, so it is still
    /// this tab's: it goes on here. A stopped run's lock is taken again first, and the store
    /// asked whether another tab continued and kept it meanwhile: if so it goes on from the
    /// stored checkpoint, never from this tab's stale copy.
    pub async fn go_on(&self) -> Result<GoOn, KeeperError> {
        let Some((id, status, revision, copy_lost)) = self
            .current
            .borrow()
            .as_ref()
            .map(|c| (c.id, c.status, c.revision, c.copy_lost))
        else {
            return Ok(GoOn::Here);
        };
        let hold = match status {
            Status::Training => return Ok(GoOn::NotYet),
            Status::Paused => {
                if let Some(current) = self.current.borrow_mut().as_mut() {
                    current.status = Status::Training;
                }
                return Ok(GoOn::Here);
            }
            Status::Ended => self.locks.hold(id).await?,
        };
        let stored = self.store.record(id).await?;
        match stored {
            // The worker's copy is the stored one, unless the worker died with it.
            Some(stored) if stored.revision == revision && !copy_lost => {
                if let Some(current) = self.current.borrow_mut().as_mut().filter(|c| c.id == id) {
                    current.status = Status::Training;
                    current.hold = hold;
                }
                Ok(GoOn::Here)
            }
            // Moved by another tab (or deleted: refused as not kept).
            _ => {
                let hold = std::rc::Rc::new(std::cell::RefCell::new(hold));
                let (record, checkpoint) = self.take_over(id, hold).await?;
                Ok(GoOn::FromStore {
                    record: Box::new(record),
                    checkpoint,
                })
            }
        }
    }

    /// Resume after the worker stopped on its own while training (a non-finite loss took it
    /// back to its last save, or its device failed): no rest is on its way, and the lock was
    /// held all along, so no other tab moved the run: it goes on here. A run that was not
    /// training is resumed as [`Self::go_on`] resumes it.
    pub async fn go_on_after_failure(&self) -> Result<GoOn, KeeperError> {
        if self.status() == Some(Status::Training) {
            return Ok(GoOn::Here);
        }
        self.go_on().await
    }

    /// Reset: the tab lets its run go, which stays in the store unless it is a start that
    /// never began (its record goes: `Some(run)`). A run a live worker (`worker_alive`) was
    /// training may still have a rest on its way, kept when it comes ([`Self::reset`]); with no
    /// live worker, nothing more of it is on its way and its lock goes now.
    pub async fn reset_run(&self, worker_alive: bool) -> Result<Option<RunId>, KeeperError> {
        let Some(run) = self.current_id() else {
            self.let_go();
            return Ok(None);
        };
        match self.abandon(run, true).await {
            Ok(true) => Ok(Some(run)),
            Ok(false) => {
                self.reset();
                if !worker_alive {
                    self.parted();
                }
                Ok(None)
            }
            Err(error) => {
                self.let_go();
                Err(error)
            }
        }
    }

    /// The worker is idle: no rest of a run a Reset let go is on its way any more
    /// ([`Self::parted`]); and where it was launching the current run (`start_ended`), that
    /// start never began and leaves no record (`Some(run)`), the tab's run being again the one
    /// it had before.
    pub async fn idle(&self, start_ended: bool) -> Result<Option<RunId>, KeeperError> {
        self.parted();
        let Some(run) = self.current_id().filter(|_| start_ended) else {
            return Ok(None);
        };
        Ok(self.abandon(run, false).await?.then_some(run))
    }

    /// The tab lets its run go (Reset): it stays in the store, to be continued from there.
    pub fn let_go(&self) {
        let gone = self.current.borrow_mut().take();
        self.tab.forget_run();
        drop(gone);
    }

    /// Reset: the tab lets its run go, as [`Self::let_go`]; but a run it was training may have
    /// a rest on its way (a Stop just before the Reset), which is kept when it comes, and its
    /// lock is held till then, or till the worker says it is idle ([`Self::parted`]).
    pub fn reset(&self) {
        let gone = self.current.borrow_mut().take();
        self.tab.forget_run();
        let parting = gone.filter(|c| c.status == Status::Training && c.kept && !c.fresh);
        let earlier = std::mem::replace(&mut *self.parting.borrow_mut(), parting);
        drop(earlier);
    }

    /// The worker is idle after a Reset: no rest of the run let go is on its way any more, and
    /// its lock goes.
    pub fn parted(&self) {
        let gone = {
            let mut parting = self.parting.borrow_mut();
            match parting.as_ref() {
                // A rest asked before the Reset is still to be written: it lets the lock go.
                Some(p) if p.rest_on_its_way => None,
                _ => parting.take(),
            }
        };
        drop(gone);
    }

    /// Deletes run `id`: its record, checkpoint and weights together. Refused while another
    /// tab trains it. Whether it was this tab's current run (its training stops with it).
    pub async fn delete(&self, id: RunId) -> Result<bool, KeeperError> {
        let held_here = self
            .current
            .borrow()
            .as_ref()
            .is_some_and(|c| c.id == id && c.hold.is_some());
        // A run this tab does not hold is borrowed for the delete: refused if another tab
        // trains it (its saves would find it gone).
        let borrowed = if held_here {
            None
        } else {
            Some(self.locks.hold(id).await?)
        };
        let ours = self.current_id() == Some(id);
        if ours {
            self.let_go();
        } else if self.tab.run() == Some(id) {
            self.tab.forget_run();
        }
        let deleted = self.store.delete(id).await;
        drop(borrowed);
        deleted?;
        Ok(ours)
    }

    /// The runs that keep the person's digits, which go when those are deleted: each
    /// fine-tuning with a checkpoint (its plan holds the digits' pixels) and this tab's
    /// fine-tuning in training (its worker holds them, and its next checkpoint would). With a
    /// `digit` (28×28 grey levels), only those whose mix holds it; a fine-tuning whose mix
    /// cannot be read (a damaged checkpoint, one not yet made) is taken to hold it.
    pub async fn holding_digits(&self, digit: Option<&[u8]>) -> Result<Vec<RunId>, KeeperError> {
        let current = self.current_id();
        let mut holding = Vec::new();
        for record in self.store.records().await? {
            let ours = current == Some(record.id);
            if !record.fine_tunes() || !(record.has_checkpoint || ours) {
                continue;
            }
            let holds = match digit {
                None => true,
                Some(digit) => match self.store.checkpoint(record.id).await? {
                    Some(bytes) => super::read_header(&bytes).map_or(true, |(state, _)| {
                        state.plan.mix.is_some_and(|mix| {
                            mix.pixels
                                .chunks_exact(digit.len().max(1))
                                .any(|d| d == digit)
                        })
                    }),
                    None => ours,
                },
            };
            if holds {
                holding.push(record.id);
            }
        }
        Ok(holding)
    }

    /// The person deleted their digits, which run `id`, a fine-tuning on them, keeps in its
    /// checkpoint: they go from it, and the run keeps its record (its curves) and weights; it
    /// can no longer be continued. This tab's own run is let go first (the caller stops its
    /// worker, which holds the digits too), with anything of it still on its way; a start of it
    /// that never began goes altogether. Refused, as a delete is, while another tab trains it.
    pub async fn forget_digits(&self, id: RunId) -> Result<DigitsForgotten, KeeperError> {
        let current = self.current_id() == Some(id);
        let parting = self.parting.borrow_mut().take_if(|p| p.id == id);
        let ours = current || parting.is_some();
        drop(parting);
        if current {
            if self.abandon(id, true).await? {
                return Ok(DigitsForgotten::Gone);
            }
            self.let_go();
        }
        let borrowed = self.locks.hold(id).await?;
        let forgotten = self.forget_checkpoint_now(id).await;
        drop(borrowed);
        match forgotten? {
            DigitsForgotten::CheckpointDeleted if ours => Ok(DigitsForgotten::LetGoHere),
            fate => Ok(fate),
        }
    }

    /// Run `id`'s checkpoint goes, whatever revision it is at (under its lock, where there are
    /// locks); the tab forgets it as its run to resume.
    async fn forget_checkpoint_now(&self, id: RunId) -> Result<DigitsForgotten, KeeperError> {
        if self.tab.run() == Some(id) {
            self.tab.forget_run();
        }
        let Some(record) = self.store.record(id).await? else {
            return Ok(DigitsForgotten::Gone);
        };
        self.store.forget_checkpoint(id, record.revision).await?;
        Ok(DigitsForgotten::CheckpointDeleted)
    }

    /// The tab's run cannot be resumed: its checkpoint goes, its record and weights stay,
    /// unless the store has moved on from `base`, the revision whose checkpoint was found
    /// wanting (another tab kept a good one since).
    pub async fn forget_checkpoint(&self, id: RunId, base: u64) -> Result<(), KeeperError> {
        if self.tab.run() == Some(id) && self.current_id() != Some(id) {
            self.tab.forget_run();
        }
        Ok(self.store.forget_checkpoint(id, base).await?)
    }

    fn set_current(&self, current: Current<L::Hold>) {
        let old = self.current.borrow_mut().replace(current);
        drop(old);
    }
}

impl From<LockError> for KeeperError {
    fn from(error: LockError) -> Self {
        match error {
            LockError::HeldElsewhere(held) => Self::HeldElsewhere(held),
            refused @ LockError::Refused(_) => Self::LockRefused(refused.to_string()),
        }
    }
}

impl<H> Current<H> {
    fn rest(&mut self, rest: Rest) {
        match rest {
            // A paused run whose worker died has nothing to go on with here.
            Rest::Paused if !self.copy_lost => self.status = Status::Paused,
            _ => self.end(),
        }
    }

    /// Kept as far as it goes: its lock goes, and Resume takes it again.
    fn end(&mut self) {
        self.status = Status::Ended;
        self.hold = None;
    }
}
