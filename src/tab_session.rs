//! A tab's training session as a pure machine: every button, every card's request, every
//! message of the worker and its death, every keeping's outcome and the page hidden or shown
//! is one call of [`TabSession::on`], which changes the run's view and says what the page must
//! do ([`Command`]): start or end the worker, send it a message, keep, let the run go, answer
//! a card. It knows no browser: the page's training service carries its commands out and
//! hands back what came of them as events, and the native tests drive it through every order
//! of events a person, a worker and the storage can bring.

use crate::protocol::{BackendKind, FromTrainer, RunState, SavedSummary, ToTrainer};
use crate::run_record::RunRecord;
use crate::run_store::{
    GoOn, KeeperError, Kept, Rest, RunId, StartRefused, StoreError, WeightsError, short_name,
};
use crate::run_view::{RunEffect, RunFailure, RunView, SavedProblem, WorkerLoss, taken_on};
use crate::train::{PlanError, TrainingPlan};

/// A worker the session started, told apart from the ones before it: what an ended worker
/// still says is not heard.
pub type WorkerId = u32;

/// A card's request to start a run, told apart from other cards' requests.
pub type AskId = u64;

/// Why a run asked for did not start.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StartError {
    #[error("Pause or stop the run in training first: fine-tuning is a run of its own.")]
    Busy,
    #[error("This plan cannot run: {0}")]
    Plan(PlanError),
    #[error(transparent)]
    Refused(StartRefused),
    /// A Reset let it go while it was being kept.
    #[error("Run {} was let go before it started.", short_name(*.0))]
    LetGo(RunId),
    #[error("The training panel is not there to start it.")]
    NoPanel,
}

/// Why a started run ended without its weights. Read after "Run #1234 ".
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunEnded {
    /// Its own failure (a device's, a loss gone NaN, its worker's death), as the panel shows
    /// it.
    #[error("stopped: {0}")]
    Failed(RunFailure),
    /// Another tab continued the run and kept it since: this tab's copy stopped.
    #[error("stopped: {}", taken_on(.0))]
    TakenOn(StoreError),
    #[error("was let go in the training panel before it finished (it stays in the runs table).")]
    LetGo,
    #[error("was deleted.")]
    Deleted,
    #[error("stopped: the digits it fine-tuned on were deleted.")]
    DigitsDeleted,
    #[error("is not kept in this browser ({0}), so it cannot be compared.")]
    NotKept(KeeperError),
    #[error("is not kept in this browser ({0}), so it cannot be compared.")]
    NoWeights(WeightsError),
}

/// What the runs table says of a run this tab no longer keeps.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunsProblem {
    /// Another tab continued and kept it since this tab's copy was taken.
    #[error(transparent)]
    TakenOn(StoreError),
    #[error("{}. Its training stopped here.", StoreError::Gone(*.0))]
    Gone(RunId),
}

/// What the page knows beside the session when an event comes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Page {
    /// The run this tab trains, or had before a reload.
    pub tab_run: Option<RunId>,
    /// The device the form asks for.
    pub backend: Option<BackendKind>,
}

/// What happens to a tab's training session.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The page opened: the run it had before a reload is looked for.
    Opened,
    /// Train, with the form's plan.
    Train(TrainingPlan),
    /// Pause while training; else Resume (after a pause, a stop, a failure).
    PauseOrResume,
    /// A message for the worker the buttons send as it is (Stop, an export, a cell's digits):
    /// heard by a live worker only.
    Ask(ToTrainer),
    Reset,
    /// The tab's run, continued from its checkpoint on `0` (the form's device, or the CPU).
    ResumeSaved(Option<BackendKind>),
    /// The tab's run, whose checkpoint cannot be resumed, loses it.
    DiscardSaved,
    /// A run file, to go on from.
    ResumeFile(Vec<u8>),
    /// A card asks for a run of `plan` from `weights` (fine-tuning), answered once.
    CardStart {
        ask: AskId,
        plan: TrainingPlan,
        weights: Vec<u8>,
    },
    /// The runs table's Continue.
    CardContinue(RunId),
    /// The run was deleted from the runs table.
    RunDeleted(RunId),
    /// The person's digits, which the run fine-tuned on, were deleted: it let them go.
    DigitsDeleted(RunId),
    /// A message of worker `0`, with the bytes beside it.
    Worker(WorkerId, FromTrainer, Option<Vec<u8>>),
    /// Worker `0` died (a panic, a trap, its memory) or could not be started, as `1` says.
    WorkerLost(WorkerId, WorkerLoss),
    /// The page was hidden (another tab or app in front, the page being left) or shown again.
    PageHidden(bool),
    /// The drawing settled: a live worker hears it.
    DrawingSettled,
    /// What came of [`ToKeeper::StartRun`] or [`ToKeeper::StartFromFile`]: the run's id.
    StartKept(Result<RunId, StartRefused>),
    /// What came of [`ToKeeper::ContinueRun`]: its record and checkpoint.
    Continued {
        run: RunId,
        taken: Result<(RunRecord, Option<Vec<u8>>), KeeperError>,
    },
    /// What came of [`ToKeeper::GoOn`].
    WentOn(Result<GoOn, KeeperError>),
    /// What came of a keeping of run `run` ([`ToKeeper::Keep`] with `checkpoint`, else
    /// [`ToKeeper::KeepRecord`]); `rest` shows once it is kept.
    Kept {
        run: RunId,
        rest: Option<RunState>,
        checkpoint: bool,
        kept: Kept,
    },
    /// What came of [`ToKeeper::ReadSaved`].
    SavedRead(Option<Result<SavedSummary, SavedProblem>>),
}

/// What the page does for the session. Those marked "answered" come back as an event.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// A fresh worker, which the messages after it go to (answered by
    /// [`Event::WorkerNotStarted`] if it cannot start).
    StartWorker(WorkerId),
    /// The worker ends; nothing it still says is heard.
    EndWorker,
    /// To the live worker, with bytes beside the message.
    Send(ToTrainer, Option<Vec<u8>>),
    /// The drawing on the canvas, to the live worker.
    SendDrawing,
    /// For the run keeper: its store, its locks and the runs table.
    Keeper(ToKeeper),
    /// The card that asked `ask` hears whether its run started.
    AnswerCard {
        ask: AskId,
        answer: Result<RunId, StartError>,
    },
    /// The run the card awaits ended without its weights.
    EndCard(RunEnded),
    /// The run the card awaits, `0`, finished and was kept: the card gets its weights.
    FinishCard(RunId),
    /// Weights for the draw panel, with where they came from.
    UseWeights { bytes: Vec<u8>, source: String },
    /// A file to offer as a download.
    Download { bytes: Vec<u8>, name: String },
}

/// What the run keeper does for the session (`crate::ui::state::RunKeeper` in the page).
#[derive(Debug, Clone, PartialEq)]
pub enum ToKeeper {
    /// A new run of the plan, kept and locked (answered: [`Event::StartKept`]).
    StartRun(TrainingPlan),
    /// A run file, checked and kept as a new run (answered: [`Event::StartKept`]).
    StartFromFile(Vec<u8>),
    /// Run `0` taken on in this tab (answered: [`Event::Continued`]).
    ContinueRun(RunId),
    /// Resume: here, or from the store where another tab moved the run (answered:
    /// [`Event::WentOn`]); after the worker's own failure, here.
    GoOn { worker_failed: bool },
    /// A checkpoint of run `run`, with its record as `view` leaves it (answered:
    /// [`Event::Kept`]).
    Keep {
        run: RunId,
        view: Box<RunView>,
        checkpoint: Vec<u8>,
        weights: Option<Vec<u8>>,
        rest: Option<RunState>,
    },
    /// The current run's record follows `view` (answered: [`Event::Kept`], if there is one).
    KeepRecord(Box<RunView>),
    /// The worker began the current run: it is a run of its own from now on.
    Began,
    /// The worker is idle: no rest of a run a Reset let go is on its way; and where it was
    /// launching a run (`start_ended`), that start never began and leaves nothing.
    Idle { start_ended: bool },
    /// Run `run` came to `rest` without a checkpoint.
    RestedUnsaved { run: RunId, rest: Rest },
    /// The tab lets its run go (the lock, unless a rest is still on its way from a live
    /// worker).
    LetGo { worker_alive: bool },
    /// The worker died: a start it never began goes, the run it trained lets its lock go.
    WorkerLost,
    /// Run `0`'s checkpoint, found wanting at revision `1`, goes.
    ForgetCheckpoint(RunId, u64),
    /// The run the tab had before a reload, read again (answered: [`Event::SavedRead`]).
    ReadSaved,
    /// The runs table shows run `run` as it was just kept (with a checkpoint: its storage
    /// problem is gone).
    ShowKept { run: RunId, checkpoint: bool },
    /// The runs table: run `0` is no longer kept.
    DropRow(RunId),
    /// The runs table, read again.
    ReloadRows,
    /// The runs table says why the run is not kept.
    RunsProblem(RunsProblem),
    /// The runs table says the run is not kept, for this reason, and training goes on.
    NotKept(KeeperError),
}

/// How a run being kept before its worker hears of it will begin.
#[derive(Debug, Clone, PartialEq)]
enum Launch {
    /// From its plan, and the weights a fine-tuning starts from; for a card's request `ask`.
    Plan {
        plan: Box<TrainingPlan>,
        weights: Option<Vec<u8>>,
        ask: Option<AskId>,
    },
    /// From a run file's checkpoint.
    File(Vec<u8>),
}

/// What the session asked the keeper and waits for, one thing at a time.
#[derive(Debug, Clone, PartialEq)]
enum Waiting {
    Launch(Launch),
    /// Run `0` taken on, to go on on device `1`.
    Continue(RunId, Option<BackendKind>),
    /// A Resume.
    GoOn,
}

/// A tab's training session: its worker, the run a card awaits, and what it waits for.
#[derive(Debug, Default)]
pub struct TabSession {
    /// The live worker, if there is one.
    worker: Option<WorkerId>,
    /// Workers started so far.
    workers: WorkerId,
    /// The run a card awaits.
    awaited: Option<RunId>,
    waiting: Option<Waiting>,
    /// A Reset came while the session waited: what the keeper took for it is let go.
    cancelled: bool,
    /// The worker said it is starting a run and has not yet begun it.
    worker_launching: bool,
}

impl TabSession {
    /// Whether a worker lives.
    pub fn has_worker(&self) -> bool {
        self.worker.is_some()
    }

    /// Whether the session waits for a start, a continue or a resume it asked for.
    pub fn waiting(&self) -> bool {
        self.waiting.is_some()
    }

    /// One event: the view changes, and the page is told what to do, in order.
    pub fn on(&mut self, view: &mut RunView, page: Page, event: Event) -> Vec<Command> {
        let mut out = Vec::new();
        self.step(view, page, event, &mut out);
        // The panel's run failed on its own (a NaN, its device, its worker): the card that
        // awaits it hears the panel's words.
        if view.state == RunState::Failed
            && let (Some(why), Some(run)) = (view.failure.clone(), page.tab_run)
        {
            self.end_awaited_if(run, RunEnded::Failed(why), &mut out);
        }
        out
    }

    fn step(&mut self, view: &mut RunView, page: Page, event: Event, out: &mut Vec<Command>) {
        let running = matches!(view.state, RunState::Running | RunState::Starting);
        match event {
            Event::Opened => keep(out, ToKeeper::ReadSaved),
            Event::Train(plan) if !running && !self.waiting() => {
                self.launch(view, Launch::plan(plan, None, None), out)
            }
            Event::Train(_) => {}
            Event::PauseOrResume if view.state == RunState::Running => {
                self.send(ToTrainer::Pause, None, out)
            }
            Event::PauseOrResume if !self.waiting() && view.state != RunState::Starting => {
                self.waiting = Some(Waiting::GoOn);
                // After a NaN took the worker back to its last save, or its device failed.
                let worker_failed = view.state == RunState::Failed;
                keep(out, ToKeeper::GoOn { worker_failed });
            }
            Event::PauseOrResume => {}
            Event::Ask(message) => self.send(message, None, out),
            Event::Reset => {
                self.end_awaited(RunEnded::LetGo, out);
                self.send(ToTrainer::Reset, None, out);
                // The run stays in the runs table, to be continued from there.
                let worker_alive = self.has_worker();
                keep(out, ToKeeper::LetGo { worker_alive });
                self.cancelled = self.waiting();
                view.reset();
                // A live worker says it is idle; without one, nothing else would.
                if !worker_alive {
                    view.state = RunState::Idle;
                }
            }
            Event::ResumeSaved(backend) => {
                if let Some(run) = page.tab_run {
                    self.continue_run(run, backend, out);
                }
            }
            Event::DiscardSaved => {
                if let (Some(run), Some(Err(SavedProblem::Damaged { revision, .. }))) =
                    (page.tab_run, &view.saved)
                {
                    keep(out, ToKeeper::ForgetCheckpoint(run, *revision));
                }
                let worker_alive = self.has_worker();
                keep(out, ToKeeper::LetGo { worker_alive });
                view.saved = None;
            }
            Event::ResumeFile(bytes) if !running && !self.waiting() => {
                self.end_awaited(RunEnded::LetGo, out);
                self.end_worker(out);
                self.launch(view, Launch::File(bytes), out);
            }
            Event::ResumeFile(_) => {}
            Event::CardStart { ask, .. } if running || self.waiting() => {
                let answer = Err(StartError::Busy);
                out.push(Command::AnswerCard { ask, answer });
            }
            Event::CardStart { ask, plan, weights } => {
                self.launch(view, Launch::plan(plan, Some(weights), Some(ask)), out)
            }
            Event::CardContinue(_) if running => view.notice(
                "Pause or stop the run in progress before continuing another.".to_string(),
                true,
            ),
            Event::CardContinue(run) => self.continue_run(run, page.backend, out),
            Event::RunDeleted(run) => {
                let said = format!("Run {} was deleted; its training stopped.", short_name(run));
                self.let_go_of(view, run, RunEnded::Deleted, said, out);
            }
            Event::DigitsDeleted(run) => {
                let said = format!(
                    "Run {} stopped: the digits it fine-tuned on were deleted.",
                    short_name(run)
                );
                self.let_go_of(view, run, RunEnded::DigitsDeleted, said, out);
            }
            Event::Worker(worker, message, bytes) if self.worker == Some(worker) => {
                self.heard(view, message, bytes, out)
            }
            Event::WorkerLost(worker, how) if self.worker == Some(worker) => {
                self.lost(view, how, out)
            }
            // An ended worker's last words.
            Event::Worker(..) | Event::WorkerLost(..) => {}
            Event::PageHidden(hidden) => self.send(ToTrainer::PageHidden { hidden }, None, out),
            Event::DrawingSettled if self.has_worker() => out.push(Command::SendDrawing),
            Event::DrawingSettled => {}
            Event::StartKept(started) => self.started(view, page, started, out),
            Event::Continued { run, taken } => self.continued(view, run, taken, out),
            Event::WentOn(going) => self.went_on(view, page, going, out),
            Event::Kept {
                run,
                rest,
                checkpoint,
                kept,
            } => self.kept(view, page, run, rest, checkpoint, kept, out),
            Event::SavedRead(saved) => view.saved = saved,
        }
    }

    /// A new run: the view shows it starting (so that a second click starts nothing) while it
    /// is kept.
    fn launch(&mut self, view: &mut RunView, launch: Launch, out: &mut Vec<Command>) {
        if let Launch::Plan { plan, ask, .. } = &launch
            && let Err(message) = plan.validate()
        {
            view.failure = Some(RunFailure::Plan(message.clone()));
            if let Some(ask) = *ask {
                let answer = Err(StartError::Plan(message));
                out.push(Command::AnswerCard { ask, answer });
            }
            return;
        }
        view.clear();
        view.data = Default::default();
        view.state = RunState::Starting;
        let start = match &launch {
            Launch::Plan { plan, .. } => ToKeeper::StartRun((**plan).clone()),
            Launch::File(bytes) => ToKeeper::StartFromFile(bytes.clone()),
        };
        keep(out, start);
        self.waiting = Some(Waiting::Launch(launch));
    }

    /// The new run is kept (or not): its worker hears of it, and so does the card that asked.
    fn started(
        &mut self,
        view: &mut RunView,
        page: Page,
        started: Result<RunId, StartRefused>,
        out: &mut Vec<Command>,
    ) {
        let Some(Waiting::Launch(launch)) = self.waiting.take() else {
            return;
        };
        let ask = match &launch {
            Launch::Plan { ask, .. } => *ask,
            Launch::File(_) => None,
        };
        let run = match started {
            Ok(run) if std::mem::take(&mut self.cancelled) => {
                // Reset before it was kept: it never reaches a worker, and leaves nothing.
                keep(
                    out,
                    ToKeeper::LetGo {
                        worker_alive: false,
                    },
                );
                if let Some(ask) = ask {
                    let answer = Err(StartError::LetGo(run));
                    out.push(Command::AnswerCard { ask, answer });
                }
                return;
            }
            Ok(run) => run,
            Err(why) => {
                self.cancelled = false;
                view.state = RunState::Idle;
                view.failure = Some(RunFailure::NotStarted(why.clone()));
                if let Some(ask) = ask {
                    let answer = Err(StartError::Refused(why));
                    out.push(Command::AnswerCard { ask, answer });
                }
                return;
            }
        };
        self.end_awaited(RunEnded::LetGo, out);
        let backend = page.backend;
        match launch {
            Launch::Plan { plan, weights, .. } => {
                let plan = *plan;
                self.send(ToTrainer::Start { plan, backend, run }, weights, out)
            }
            Launch::File(bytes) => {
                self.send(ToTrainer::Continue { backend, run }, Some(bytes), out)
            }
        }
        if let Some(ask) = ask {
            self.awaited = Some(run);
            out.push(Command::AnswerCard {
                ask,
                answer: Ok(run),
            });
        }
    }

    /// Continues run `run` from its checkpoint (or from its plan, which its seed makes the
    /// same as its step 0, if it has none yet), unless another tab trains it.
    fn continue_run(&mut self, run: RunId, backend: Option<BackendKind>, out: &mut Vec<Command>) {
        if self.waiting() {
            return;
        }
        self.waiting = Some(Waiting::Continue(run, backend));
        keep(out, ToKeeper::ContinueRun(run));
    }

    fn continued(
        &mut self,
        view: &mut RunView,
        run: RunId,
        taken: Result<(RunRecord, Option<Vec<u8>>), KeeperError>,
        out: &mut Vec<Command>,
    ) {
        let backend = match &self.waiting {
            Some(Waiting::Continue(asked, backend)) if *asked == run => *backend,
            _ => return,
        };
        self.waiting = None;
        if std::mem::take(&mut self.cancelled) {
            return self.let_go_taken(taken.is_ok(), out);
        }
        match taken {
            Ok((record, checkpoint)) => {
                self.go_on_from(view, run, record, checkpoint, backend, out)
            }
            Err(error) => view.failure = Some(RunFailure::NotContinued(error)),
        }
    }

    fn went_on(
        &mut self,
        view: &mut RunView,
        page: Page,
        going: Result<GoOn, KeeperError>,
        out: &mut Vec<Command>,
    ) {
        if self.waiting.take_if(|w| *w == Waiting::GoOn).is_none() {
            return;
        }
        if std::mem::take(&mut self.cancelled) {
            return self.let_go_taken(matches!(going, Ok(GoOn::FromStore { .. })), out);
        }
        match going {
            Ok(GoOn::Here) => self.send(ToTrainer::Resume, None, out),
            // Another tab moved the run since this tab stopped it: from the stored
            // checkpoint, never from this tab's copy.
            Ok(GoOn::FromStore { record, checkpoint }) => {
                let (run, step) = (record.id, record.step);
                self.go_on_from(view, run, *record, checkpoint, page.backend, out);
                view.notice(
                    format!(
                        "Run {} was continued in another tab meanwhile: it goes on from there (step {step}).",
                        short_name(run)
                    ),
                    true,
                );
            }
            Ok(GoOn::NotYet) => view.notice(
                "Not resumed yet: the run's pause is still being kept. Resume again in a moment."
                    .to_string(),
                true,
            ),
            Err(error) => view.notice(format!("Not resumed: {error}."), true),
        }
    }

    /// Run `run` goes on in a fresh worker from the stored `checkpoint` (or from its plan,
    /// without one), in its own `record`.
    fn go_on_from(
        &mut self,
        view: &mut RunView,
        run: RunId,
        record: RunRecord,
        checkpoint: Option<Vec<u8>>,
        backend: Option<BackendKind>,
        out: &mut Vec<Command>,
    ) {
        // A fine-tuning began from weights it was given, which its checkpoint keeps (with the
        // person's digits): without one it cannot go on as itself.
        if checkpoint.is_none() && record.fine_tunes() {
            let worker_alive = self.has_worker();
            keep(out, ToKeeper::LetGo { worker_alive });
            view.failure = Some(RunFailure::NoCheckpoint(run));
            return;
        }
        if self.awaited != Some(run) {
            self.end_awaited(RunEnded::LetGo, out);
        }
        // A fresh worker: the old one may have died with its device, or hold a stale copy.
        self.end_worker(out);
        view.clear();
        view.timeline = record.timeline;
        view.state = RunState::Starting;
        match checkpoint {
            Some(bytes) => self.send(ToTrainer::Continue { backend, run }, Some(bytes), out),
            None => {
                let plan = record.plan;
                self.send(ToTrainer::Start { plan, backend, run }, None, out)
            }
        }
    }

    /// The tab's run `run` was let go in its store (`ended`): its worker stops, and the panel
    /// says it.
    fn let_go_of(
        &mut self,
        view: &mut RunView,
        run: RunId,
        ended: RunEnded,
        said: String,
        out: &mut Vec<Command>,
    ) {
        self.end_awaited_if(run, ended, out);
        self.send(ToTrainer::Reset, None, out);
        view.reset();
        view.state = RunState::Idle;
        view.notice(said, false);
    }

    /// A message of the live worker.
    fn heard(
        &mut self,
        view: &mut RunView,
        message: FromTrainer,
        bytes: Option<Vec<u8>>,
        out: &mut Vec<Command>,
    ) {
        let idle = message
            == FromTrainer::State {
                state: RunState::Idle,
            };
        // Only an idle that follows a launch ends a start: one answering an earlier Reset
        // may come after the next start was kept.
        match &message {
            FromTrainer::State {
                state: RunState::Starting,
            } => self.worker_launching = true,
            FromTrainer::Started { .. } => self.worker_launching = false,
            _ => {}
        }
        if idle {
            let start_ended = std::mem::take(&mut self.worker_launching);
            keep(out, ToKeeper::Idle { start_ended });
        }
        match view.apply(message, bytes) {
            RunEffect::None => {}
            RunEffect::UseWeights { bytes, source } => {
                out.push(Command::UseWeights { bytes, source })
            }
            RunEffect::Download { bytes, name } => out.push(Command::Download { bytes, name }),
            RunEffect::RefreshSaved => keep(out, ToKeeper::ReadSaved),
            RunEffect::RestedUnsaved { run, rest } => {
                if let Some(rest) = Rest::of(rest) {
                    keep(out, ToKeeper::RestedUnsaved { run, rest });
                }
                keep(out, ToKeeper::KeepRecord(Box::new(view.clone())));
                keep(out, ToKeeper::ReadSaved);
            }
            RunEffect::Started { plan: _ } => {
                keep(out, ToKeeper::Began);
                out.push(Command::SendDrawing);
                keep(out, ToKeeper::KeepRecord(Box::new(view.clone())));
            }
            RunEffect::Moved => keep(out, ToKeeper::KeepRecord(Box::new(view.clone()))),
            RunEffect::Keep {
                run,
                step: _,
                rest,
                checkpoint,
                weights,
            } => keep(
                out,
                ToKeeper::Keep {
                    run,
                    view: Box::new(view.clone()),
                    checkpoint,
                    weights,
                    rest,
                },
            ),
        }
    }

    /// The worker died: nothing it held can answer any more, and nothing more comes from it.
    fn lost(&mut self, view: &mut RunView, how: WorkerLoss, out: &mut Vec<Command>) {
        self.end_worker(out);
        // A Resume or a continue asked of the keeper still lands; a start being kept too, in
        // a fresh worker.
        keep(out, ToKeeper::WorkerLost);
        if view.worker_lost(how) == RunEffect::RefreshSaved {
            keep(out, ToKeeper::ReadSaved);
        }
    }

    /// What came of a keeping, matched here and nowhere else.
    #[allow(clippy::too_many_arguments)]
    fn kept(
        &mut self,
        view: &mut RunView,
        page: Page,
        run: RunId,
        rest: Option<RunState>,
        checkpoint: bool,
        kept: Kept,
        out: &mut Vec<Command>,
    ) {
        let finished = rest == Some(RunState::Finished);
        match kept {
            Kept::Done(written) => {
                if written {
                    keep(out, ToKeeper::ShowKept { run, checkpoint });
                }
                if finished && self.awaited == Some(run) {
                    self.awaited = None;
                    out.push(Command::FinishCard(run));
                }
            }
            // Another tab continued and kept the run since this tab's copy was taken: this
            // copy is stale; its worker stops and writes nothing more.
            Kept::Moved(error) => {
                keep(
                    out,
                    ToKeeper::RunsProblem(RunsProblem::TakenOn(error.clone())),
                );
                keep(out, ToKeeper::ReloadRows);
                self.end_awaited(RunEnded::TakenOn(error.clone()), out);
                self.send(ToTrainer::Reset, None, out);
                view.reset();
                view.state = RunState::Idle;
                view.failure = Some(RunFailure::TakenOn(error));
                return;
            }
            Kept::Gone(gone) => {
                keep(out, ToKeeper::DropRow(gone));
                keep(out, ToKeeper::RunsProblem(RunsProblem::Gone(gone)));
                return self.step(view, page, Event::RunDeleted(gone), out);
            }
            Kept::Refused(error) => {
                keep(out, ToKeeper::NotKept(error.clone()));
                if checkpoint {
                    if finished {
                        self.end_awaited_if(run, RunEnded::NotKept(error.clone()), out);
                    }
                    view.notice(format!("This checkpoint was not kept: {error}."), true);
                }
            }
        }
        if let Some(state) = rest
            && page.tab_run == Some(run)
        {
            view.state = state;
            keep(out, ToKeeper::ReadSaved);
        }
    }

    /// To the live worker; a fresh one is started first where there is none and the message
    /// begins a run.
    fn send(&mut self, message: ToTrainer, bytes: Option<Vec<u8>>, out: &mut Vec<Command>) {
        let begins = matches!(
            message,
            ToTrainer::Start { .. } | ToTrainer::Continue { .. }
        );
        if self.worker.is_none() && begins {
            self.workers += 1;
            self.worker = Some(self.workers);
            out.push(Command::StartWorker(self.workers));
        }
        if self.worker.is_some() {
            out.push(Command::Send(message, bytes));
        }
    }

    fn end_worker(&mut self, out: &mut Vec<Command>) {
        self.worker_launching = false;
        if self.worker.take().is_some() {
            out.push(Command::EndWorker);
        }
    }

    /// What the keeper took for a wait a Reset cancelled (`taken`: a run and its lock) goes:
    /// no worker will train it.
    fn let_go_taken(&mut self, taken: bool, out: &mut Vec<Command>) {
        if taken {
            keep(
                out,
                ToKeeper::LetGo {
                    worker_alive: false,
                },
            );
        }
    }

    /// The awaited run, if any, ended: the card that awaits it hears why.
    fn end_awaited(&mut self, ended: RunEnded, out: &mut Vec<Command>) {
        if self.awaited.take().is_some() {
            out.push(Command::EndCard(ended));
        }
    }

    fn end_awaited_if(&mut self, run: RunId, ended: RunEnded, out: &mut Vec<Command>) {
        if self.awaited == Some(run) {
            self.end_awaited(ended, out);
        }
    }
}

impl Launch {
    fn plan(plan: TrainingPlan, weights: Option<Vec<u8>>, ask: Option<AskId>) -> Self {
        let plan = Box::new(plan);
        Self::Plan { plan, weights, ask }
    }
}

fn keep(out: &mut Vec<Command>, command: ToKeeper) {
    out.push(Command::Keeper(command));
}
