//! The runs table's records and the tab's current run, as the page shows and keeps them:
//! [`crate::run_store::Keeper`] over the browser's database, Web Locks and `sessionStorage`,
//! with the signals the runs table and the training panel read. Storage that fails is said in
//! the runs panel; the run itself goes on.

use futures::future::LocalBoxFuture;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::analysis::timeline::Timeline;
use crate::run_record::RunRecord;
use crate::run_store::{
    DigitsForgotten, GoOn, Keeper, KeeperError, Kept, Rest, RunId, RunStore, StartRefused,
    StoreError, WeightsError, read_header,
};
use crate::run_view::{RunView, SavedProblem};
use crate::tab_session::{Event, RunsProblem, ToKeeper};
use crate::train::{SavedSummary, TrainingPlan};
use crate::web::{
    DatabaseNotice, PageRuns, SessionTab, WebLocks, ask_to_persist, draw_run_id, storage_estimate,
};

type TabKeeper = Keeper<PageRuns, WebLocks, SessionTab>;

/// Bytes the page's storage uses, and may use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Space {
    pub used: f64,
    pub quota: f64,
    /// The browser agreed not to evict it under pressure.
    pub persistent: bool,
}

/// What the runs panel says went wrong with the runs kept, typed until it says it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunsNote {
    /// The database has something to say (another tab holds or needs it).
    #[error("The runs: {0}.")]
    Database(DatabaseNotice),
    /// The records could not be read.
    #[error("{0}")]
    Unreadable(StoreError),
    /// The tab's run is not kept, or no longer this tab's (`crate::tab_session`).
    #[error(transparent)]
    Session(RunsProblem),
    #[error("The run is not kept in this browser: {0}. Training goes on.")]
    NotKept(KeeperError),
    /// A row's weights, for the draw panel, could not be read.
    #[error("{0}")]
    NoWeights(WeightsError),
    #[error("Not deleted: {0}.")]
    NotDeleted(KeeperError),
}

#[derive(Clone, Copy)]
pub struct RunKeeper {
    /// The records, oldest first, the run in progress among them.
    pub records: RwSignal<Vec<RunRecord>>,
    /// Why they cannot be kept, when they cannot.
    pub problem: RwSignal<Option<RunsNote>>,
    pub space: RwSignal<Option<Space>>,
    keeper: StoredValue<TabKeeper, LocalStorage>,
    persistent: StoredValue<Option<bool>>,
}

/// `make` for a run started now from `plan` at `step`.
fn new_record(plan: TrainingPlan, step: usize) -> impl Fn(RunId) -> RunRecord {
    move |id| {
        let mut record = RunRecord::new(id, plan.clone(), js_sys::Date::now() as u64);
        record.step = step;
        record
    }
}

impl Default for RunKeeper {
    fn default() -> Self {
        Self::new()
    }
}

impl RunKeeper {
    /// No records yet (`RunKeeper::load` reads them), over the browser's database.
    pub fn new() -> Self {
        let (records, problem) = (RwSignal::new(Vec::new()), RwSignal::new(None));
        let said = std::rc::Rc::new(move |notice: DatabaseNotice| {
            problem.set(Some(RunsNote::Database(notice)));
        });
        let keeper = Keeper::new(PageRuns::new(said), WebLocks, SessionTab, draw_run_id);
        Self {
            records,
            problem,
            space: RwSignal::new(None),
            keeper: StoredValue::new_local(keeper),
            persistent: StoredValue::new(None),
        }
    }

    fn keeper(self) -> TabKeeper {
        self.keeper.get_value()
    }

    /// Carries out what the tab's session asks of the keeper; what came of it goes to
    /// `answer`, later, where the session awaits it.
    pub fn carry(self, command: ToKeeper, answer: impl FnOnce(Event) + 'static) {
        let later = |asked: LocalBoxFuture<'static, Option<Event>>| {
            spawn_local(async move { asked.await.map_or((), answer) })
        };
        match command {
            ToKeeper::StartRun(plan) => later(Box::pin(async move {
                let started = self.start(plan).await;
                Some(Event::StartKept(started.map_err(StartRefused::NotKept)))
            })),
            ToKeeper::StartFromFile(bytes) => later(Box::pin(async move {
                Some(Event::StartKept(self.start_from_file(&bytes).await))
            })),
            ToKeeper::ContinueRun(run) => later(Box::pin(async move {
                let taken = self.keeper().continue_run(run).await;
                Some(Event::Continued { run, taken })
            })),
            ToKeeper::GoOn { worker_failed } => later(Box::pin(async move {
                Some(Event::WentOn(self.go_on(worker_failed).await))
            })),
            ToKeeper::Keep {
                run,
                view,
                checkpoint,
                weights,
                rest,
            } => later(Box::pin(async move {
                let kept = self
                    .keep(run, *view, checkpoint, weights, rest.and_then(Rest::of))
                    .await;
                let checkpoint = true;
                Some(Event::Kept {
                    run,
                    rest,
                    checkpoint,
                    kept,
                })
            })),
            ToKeeper::KeepRecord(view) => later(Box::pin(async move {
                let (run, kept) = self.keep_record(*view).await?;
                let (rest, checkpoint) = (None, false);
                Some(Event::Kept {
                    run,
                    rest,
                    checkpoint,
                    kept,
                })
            })),
            ToKeeper::ReadSaved => later(Box::pin(async move {
                Some(Event::SavedRead(self.offered().await))
            })),
            ToKeeper::ForgetCheckpoint(run, revision) => later(Box::pin(async move {
                self.forget_checkpoint(run, revision).await;
                None
            })),
            ToKeeper::Began => self.began(),
            ToKeeper::Idle { start_ended } => self.idle(start_ended),
            ToKeeper::RestedUnsaved { run, rest } => self.keeper().rested_unsaved(run, rest),
            ToKeeper::LetGo { worker_alive } => self.let_go(worker_alive),
            ToKeeper::WorkerLost => self.worker_lost(),
            ToKeeper::ShowKept { run, checkpoint } => self.show_kept(run, checkpoint),
            ToKeeper::DropRow(run) => self.records.update(|all| all.retain(|r| r.id != run)),
            ToKeeper::ReloadRows => self.load(),
            ToKeeper::RunsProblem(why) => self.problem.set(Some(RunsNote::Session(why))),
            ToKeeper::NotKept(error) => self.said(error),
        }
    }

    /// The records kept in this browser, into the table.
    pub fn load(self) {
        spawn_local(async move {
            // Not in the task that builds the app, the first load's longest.
            crate::web::next_task().await;
            match self.keeper().store().records().await {
                Ok(records) => self.records.set(records),
                Err(error) => self.problem.set(Some(RunsNote::Unreadable(error))),
            }
            self.measure_space().await;
        });
    }

    /// The timeline of the run in progress, as its record keeps it.
    pub fn timeline(self) -> Timeline {
        self.keeper()
            .record()
            .map(|record| record.timeline)
            .unwrap_or_default()
    }

    /// A new run of `plan`: kept and locked before it is sent to the worker. Its id.
    async fn start(self, plan: TrainingPlan) -> Result<RunId, KeeperError> {
        self.begin(new_record(plan, 0), None).await
    }

    /// A run file (its header checked), kept as a new run that starts from it. Its id.
    async fn start_from_file(self, bytes: &[u8]) -> Result<RunId, StartRefused> {
        let (state, _) = read_header(bytes).map_err(StartRefused::UnreadableFile)?;
        self.begin(new_record(state.plan, state.step), Some(bytes.to_vec()))
            .await
            .map_err(StartRefused::FileNotKept)
    }

    async fn begin(
        self,
        make: impl Fn(RunId) -> RunRecord,
        checkpoint: Option<Vec<u8>>,
    ) -> Result<RunId, KeeperError> {
        let keeper = self.keeper();
        let (id, unkept) = keeper.start(make, checkpoint).await?;
        match unkept {
            Some(error) => self.said(error),
            None => {
                self.problem.set(None);
                if let Some(record) = keeper.record() {
                    self.show(record);
                }
            }
        }
        Ok(id)
    }

    /// The run this tab had before a reload, and what can be resumed of it (from its
    /// checkpoint, or from its step 0), or why it cannot be: a database that could not be
    /// read now is told apart from a checkpoint that cannot be resumed.
    async fn offered(self) -> Option<Result<SavedSummary, SavedProblem>> {
        let keeper = self.keeper();
        let record = keeper.offered().await?;
        let checkpoint = match keeper.store().checkpoint(record.id).await {
            Ok(checkpoint) => checkpoint,
            Err(error) => return Some(Err(SavedProblem::Unreadable(error))),
        };
        Some(match checkpoint {
            Some(bytes) => read_header(&bytes)
                .map(|(_, summary)| summary)
                .map_err(|why| SavedProblem::Damaged {
                    why,
                    revision: record.revision,
                }),
            None => Ok(SavedSummary {
                step: 0,
                total_steps: record.total_steps,
                plan: record.plan,
            }),
        })
    }

    /// The run this tab remembers, whether it trains it now or had it before a reload.
    pub fn tab_run(self) -> Option<RunId> {
        use crate::run_store::TabMemory;
        self.keeper().current_id().or_else(|| SessionTab.run())
    }

    /// The current run's record follows `view` (an evaluation, a change of state): the run
    /// and what came of it ([`crate::tab_session`] acts on it), where there is a current run.
    async fn keep_record(self, view: RunView) -> Option<(RunId, Kept)> {
        let run = self.keeper().current_id()?;
        let kept = self
            .keeper()
            .keep(
                run,
                |record| record.update(view.progress()),
                (None, None),
                None,
            )
            .await;
        Some((run, kept.into()))
    }

    /// Keeps run `run`'s checkpoint (and weights) with its record as `view` leaves it; a
    /// `rest` counts once kept. What came of it ([`crate::tab_session`] acts on it).
    async fn keep(
        self,
        run: RunId,
        view: RunView,
        checkpoint: Vec<u8>,
        weights: Option<Vec<u8>>,
        rest: Option<Rest>,
    ) -> Kept {
        let kept = self
            .keeper()
            .keep(
                run,
                |record| record.update(view.progress()),
                (Some(checkpoint), weights),
                rest,
            )
            .await;
        let ask = kept == Ok(true) && self.persistent.get_value().is_none();
        if ask {
            self.persistent.set_value(Some(false));
        }
        // Beside the keeping, not in its way: a browser may hold the answer for its user.
        spawn_local(async move {
            if ask {
                // Asked once a run is first kept, not before: a visit that only draws asks
                // nothing.
                self.persistent.set_value(Some(ask_to_persist().await));
            }
            self.measure_space().await;
        });
        kept.into()
    }

    /// Run `run` was just kept: its row as kept (the rest of a run a Reset let go: as the
    /// store now has it); with a checkpoint, the runs are kept again.
    fn show_kept(self, run: RunId, checkpoint: bool) {
        match self.keeper().record().filter(|record| record.id == run) {
            Some(record) => self.show(record),
            None => self.load(),
        }
        if checkpoint {
            self.problem.set(None);
        }
    }

    /// Resume after a pause or a stop: here, or from the stored checkpoint where another tab
    /// moved the run meanwhile. After a failure of the worker's own (`worker_failed`), here.
    async fn go_on(self, worker_failed: bool) -> Result<GoOn, KeeperError> {
        let keeper = self.keeper();
        let going = if worker_failed {
            keeper.go_on_after_failure().await
        } else {
            keeper.go_on().await
        };
        if let Ok(GoOn::FromStore { record, .. }) = &going {
            self.show(record.as_ref().clone());
        }
        going
    }

    /// The tab lets its run go (Reset, [`Keeper::reset_run`]): its row stays, unless it
    /// never began.
    fn let_go(self, worker_alive: bool) {
        let keeper = self.keeper();
        spawn_local(async move {
            match keeper.reset_run(worker_alive).await {
                Ok(gone) => self
                    .records
                    .update(|all| all.retain(|r| Some(r.id) != gone)),
                Err(error) => self.said(error),
            }
        });
    }

    /// The training worker died ([`Keeper::worker_lost`]): a start it never began leaves no
    /// row, and the run it trained lets its lock go.
    fn worker_lost(self) {
        let keeper = self.keeper();
        let run = keeper.current_id();
        spawn_local(async move {
            match keeper.worker_lost().await {
                Ok(true) => self.records.update(|all| all.retain(|r| Some(r.id) != run)),
                Ok(false) => {}
                Err(error) => self.said(error),
            }
        });
    }

    /// The person deleted their digits (or one `digit`): every run that keeps them
    /// ([`Keeper::holding_digits`]) lets them go ([`Keeper::forget_digits`]). What became of
    /// each; the table shows them as they are now.
    pub async fn forget_digits(
        self,
        digit: Option<&[u8]>,
    ) -> Result<Vec<(RunId, Result<DigitsForgotten, KeeperError>)>, KeeperError> {
        let keeper = self.keeper();
        let holding = keeper.holding_digits(digit).await?;
        let mut fates = Vec::with_capacity(holding.len());
        for run in holding {
            fates.push((run, keeper.forget_digits(run).await));
        }
        self.load();
        Ok(fates)
    }

    /// The worker began the current run: it is a run of its own from now on.
    fn began(self) {
        let keeper = self.keeper();
        if let Some(run) = keeper.current_id() {
            keeper.began(run);
        }
    }

    /// The worker is idle again ([`Keeper::idle`]): a start that never began leaves no row.
    fn idle(self, start_ended: bool) {
        let keeper = self.keeper();
        spawn_local(async move {
            if let Ok(gone @ Some(_)) = keeper.idle(start_ended).await {
                self.records
                    .update(|all| all.retain(|r| Some(r.id) != gone));
            }
        });
    }

    /// Deletes run `id` with its checkpoint and weights; whether it was the tab's current run
    /// (whose training the caller stops: `Training::deleted`).
    pub async fn delete(self, id: RunId) -> Result<bool, KeeperError> {
        let ours = self.keeper().delete(id).await?;
        self.records.update(|all| all.retain(|r| r.id != id));
        self.measure_space().await;
        Ok(ours)
    }

    /// The tab's run cannot be resumed: its checkpoint goes (its record and weights stay),
    /// unless the run moved on from `revision`, the one found wanting.
    async fn forget_checkpoint(self, id: RunId, revision: u64) {
        match self.keeper().forget_checkpoint(id, revision).await {
            Ok(()) => self.records.update(|all| {
                if let Some(record) = all.iter_mut().find(|r| r.id == id) {
                    record.has_checkpoint = false;
                }
            }),
            Err(error) => self.said(error),
        }
    }

    /// Run `id`'s weights, if it has them.
    pub async fn weights(self, id: RunId) -> Result<Vec<u8>, WeightsError> {
        self.keeper()
            .store()
            .weights(id)
            .await?
            .ok_or(WeightsError::Gone)
    }

    async fn measure_space(self) {
        if let Some((used, quota)) = storage_estimate().await {
            self.space.set(Some(Space {
                used,
                quota,
                persistent: self.persistent.get_value() == Some(true),
            }));
        }
    }

    /// `record` in the table: in its place, or added.
    fn show(self, record: RunRecord) {
        self.records
            .update(|all| match all.iter_mut().find(|r| r.id == record.id) {
                Some(old) => *old = record,
                None => all.push(record),
            });
    }

    fn said(self, error: impl Into<KeeperError>) {
        self.problem.set(Some(RunsNote::NotKept(error.into())));
    }
}
