//! The training run as the page's service drives it: the worker it talks to (started on first
//! use, so a visit that only draws never loads it), the run's view in a Leptos store, what the
//! panel's buttons do, and the requests other cards send ([`super::Training`]). Shared with
//! the panel's parts through context.

use futures::StreamExt;
use futures::channel::{mpsc, oneshot};
use leptos::prelude::*;
use leptos::task::spawn_local;
use reactive_stores::Store;

use super::plan_choice::PlanChoice;
use super::shown::Shown;
use super::{RunEnded, RunHandle, RunSteps, StartError, TrainingRequest};
use crate::protocol::{BackendKind, DataProgress, FromTrainer, RunState, ToTrainer};
use crate::run_record::RunRecord;
use crate::run_store::{GoOn, KeeperError, Rest, StoreError};
use crate::run_view::{RunEffect, RunView, RunViewStoreFields, SavedProblem};
use crate::train::TrainingPlan;
use crate::ui::state::{AppState, WhenSettled};
use crate::web::{TrainerLost, TrainerWorker, offer_download};

#[derive(Clone, Copy)]
pub struct TrainingControl {
    app: AppState,
    pub plan: PlanChoice,
    pub run: Store<RunView>,
    pub shown: Shown,
    worker: StoredValue<Option<TrainerWorker>, LocalStorage>,
    /// The run a card awaits (`crate::ui::state::Training::start`), and where its end goes.
    awaited: StoredValue<Option<Awaited>, LocalStorage>,
}

/// A run a card awaits, and the oneshot its end is told through.
struct Awaited {
    run: u64,
    tell: oneshot::Sender<Result<Vec<u8>, RunEnded>>,
}

impl TrainingControl {
    pub fn new(
        app: AppState,
        initial_plan: Option<TrainingPlan>,
        cpu_workers: Option<usize>,
        requests: mpsc::UnboundedReceiver<TrainingRequest>,
    ) -> Self {
        let run = Store::new(RunView::default());
        let trainer = Self {
            app,
            plan: PlanChoice::new(app.preferred, initial_plan, cpu_workers),
            run,
            shown: Shown::of(run),
            worker: StoredValue::new_local(None),
            awaited: StoredValue::new_local(None),
        };
        trainer.refresh_saved();
        trainer.send_drawing_when_it_settles();
        trainer.keep_when_hidden();
        trainer.serve(requests);
        trainer
    }

    /// What other cards ask ([`crate::ui::state::Training`]), one request at a time.
    fn serve(self, mut requests: mpsc::UnboundedReceiver<TrainingRequest>) {
        spawn_local(async move {
            while let Some(request) = requests.next().await {
                match request {
                    TrainingRequest::Start {
                        plan,
                        weights,
                        answer,
                    } => self.start_for_a_card(plan, weights.to_vec(), answer),
                    TrainingRequest::Continue(run) => self.continue_from_the_table(run),
                    TrainingRequest::Deleted(run) => self.let_go_of_a_deleted_run(run),
                    TrainingRequest::DigitsDeleted(run) => self.let_go_of(
                        run,
                        RunEnded::DigitsDeleted,
                        format!(
                            "Run {} stopped: the digits it fine-tuned on were deleted.",
                            crate::run_store::short_name(run)
                        ),
                    ),
                }
            }
        });
    }

    pub fn app(self) -> AppState {
        self.app
    }

    pub fn has_worker(self) -> bool {
        self.worker.with_value(Option::is_some)
    }

    /// Whether a run is under way (tracked).
    pub fn running(self) -> bool {
        matches!(
            self.shown.state.get(),
            RunState::Running | RunState::Starting
        )
    }

    /// Whether the worker holds a model to export (tracked).
    pub fn has_model(self) -> bool {
        self.shown.state.get().has_model() && self.has_worker()
    }

    /// The device the form asks for.
    pub fn backend(self) -> Option<BackendKind> {
        self.plan.backend.get_untracked()
    }

    /// To the worker, started first if there is none.
    pub fn send(self, message: ToTrainer) {
        self.send_with(message, None);
    }

    pub fn start(self) {
        let plan = self.plan.form.get_untracked();
        self.begin(plan, None, |_| {});
    }

    /// A new run of `plan`, from `weights` where given (fine-tuning), else from a fresh
    /// model; `told` hears its id once it is kept and sent, or why it did not start.
    fn begin(
        self,
        plan: TrainingPlan,
        weights: Option<Vec<u8>>,
        told: impl FnOnce(Result<u64, String>) + 'static,
    ) {
        if let Err(message) = plan.validate() {
            let why = format!("This plan cannot run: {message}");
            self.run.failure().set(Some(why.clone()));
            return told(Err(why));
        }
        self.clear_for_a_new_run();
        // Starting from the click: a second click cannot start a second run meanwhile.
        self.run.state().set(RunState::Starting);
        spawn_local(async move {
            match self.app.keeper.start(plan.clone()).await {
                Ok(run) => {
                    self.end_awaited(RunEnded::LetGo);
                    let start = ToTrainer::Start {
                        plan,
                        backend: self.backend(),
                        run,
                    };
                    self.send_with(start, weights);
                    told(Ok(run));
                }
                Err(error) => {
                    let why = format!("Not started: {error}.");
                    self.not_started(why.clone());
                    told(Err(why));
                }
            }
        });
    }

    /// A run a card asks for ("Learn my handwriting"): a run like any other, unless one is
    /// under way (it would lose its place). Its handle once it is kept and sent.
    fn start_for_a_card(
        self,
        plan: TrainingPlan,
        weights: Vec<u8>,
        answer: oneshot::Sender<Result<RunHandle, StartError>>,
    ) {
        if self.running() {
            let _ = answer.send(Err(StartError::Busy));
            return;
        }
        let told = move |started: Result<u64, String>| {
            let handle = started.map_err(StartError::NotStarted).map(|run| {
                let (tell, end) = oneshot::channel();
                self.awaited.set_value(Some(Awaited { run, tell }));
                RunHandle::new(run, self.steps_of(run), end)
            });
            let _ = answer.send(handle);
        };
        self.begin(plan, Some(weights), told);
    }

    /// Run `run`'s steps taken and in all, while it is the panel's run.
    fn steps_of(self, run: u64) -> RunSteps {
        let (keeper, report) = (self.app.keeper, self.shown.report);
        Signal::derive(move || {
            (keeper.tab_run() == Some(run))
                .then(|| report.with(|r| r.as_ref().map(|r| (r.point.step, r.total_steps))))
                .flatten()
        })
    }

    /// The awaited run, if any, ended: the card that awaits it hears why.
    fn end_awaited(self, ended: RunEnded) {
        if let Some(awaited) = self.awaited.try_update_value(Option::take).flatten() {
            let _ = awaited.tell.send(Err(ended));
        }
    }

    /// The awaited run ended, if it is `run`.
    fn end_awaited_if(self, run: u64, ended: RunEnded) {
        if self.awaited_is(run) {
            self.end_awaited(ended);
        }
    }

    fn awaited_is(self, run: u64) -> bool {
        self.awaited
            .try_with_value(|a| a.as_ref().is_some_and(|a| a.run == run))
            .unwrap_or(false)
    }

    /// Run `run` finished and was kept: the card that awaits it gets its weights.
    fn finish_awaited(self, run: u64) {
        if !self.awaited_is(run) {
            return;
        }
        spawn_local(async move {
            let weights = self.app.keeper.weights(run).await;
            if let Some(awaited) = self
                .awaited
                .try_update_value(Option::take)
                .flatten()
                .filter(|a| a.run == run)
            {
                let _ = awaited.tell.send(weights.map_err(RunEnded::NotKept));
            }
        });
    }

    /// The panel's run failed on its own (a NaN, its device, its worker): a card awaiting it
    /// hears the panel's words.
    fn tell_a_failure(self) {
        let failure = self.run.with_untracked(|view| {
            (view.state == RunState::Failed)
                .then(|| view.failure.clone())
                .flatten()
        });
        if let (Some(why), Some(run)) = (failure, self.app.keeper.tab_run()) {
            self.end_awaited_if(run, RunEnded::Failed(why));
        }
    }

    fn not_started(self, why: String) {
        self.run.update(|view| {
            view.state = RunState::Idle;
            view.failure = Some(why);
        });
    }

    /// Continues the tab's run from its last checkpoint.
    pub fn resume_saved(self, backend: Option<BackendKind>) {
        if let Some(run) = self.app.keeper.tab_run() {
            self.continue_run(run, backend);
        }
    }

    /// Continues run `run` from its checkpoint (or from its plan, which its seed makes the same
    /// as its step 0, if it has none yet: the worker refuses that for a fine-tuning, whose
    /// step 0 is weights it was sent), in its own record; it becomes the tab's run, unless
    /// another tab is training it.
    fn continue_run(self, run: u64, backend: Option<BackendKind>) {
        spawn_local(async move {
            match self.app.keeper.continue_run(run).await {
                Ok((record, checkpoint)) => self.go_on_from(run, record, checkpoint, backend),
                Err(error) => {
                    let message = format!("Not continued: {error}.");
                    self.run.failure().set(Some(message));
                }
            }
        });
    }

    /// Run `run` goes on in a fresh worker from the stored `checkpoint` (or from its plan,
    /// without one), in its own `record`.
    fn go_on_from(
        self,
        run: u64,
        record: RunRecord,
        checkpoint: Option<Vec<u8>>,
        backend: Option<BackendKind>,
    ) {
        // A fine-tuning began from weights it was given, which its checkpoint keeps (with the
        // person's digits): without one it cannot go on as itself.
        if checkpoint.is_none() && record.fine_tunes() {
            self.app.keeper.let_go(self.has_worker());
            return self.run.failure().set(Some(format!(
                "Run {} fine-tuned on your digits and has no checkpoint to go on from: start it again from Handwriting.",
                crate::run_store::short_name(run)
            )));
        }
        if !self.awaited_is(run) {
            self.end_awaited(RunEnded::LetGo);
        }
        // A fresh worker: the old one may have died with its device, or hold a stale copy.
        self.worker.set_value(None);
        self.run.update(|view| {
            view.clear();
            view.timeline = record.timeline.clone();
            view.state = RunState::Starting;
        });
        match checkpoint {
            Some(bytes) => self.send_with(ToTrainer::Continue { backend, run }, Some(bytes)),
            None => self.send(ToTrainer::Start {
                plan: record.plan,
                backend,
                run,
            }),
        }
    }

    /// This tab's copy of its run is stale: another tab continued and kept the run since. Its
    /// worker stops and writes nothing more; the panel says where the run went on.
    fn stale(self, why: &KeeperError) {
        if self.has_worker() {
            self.send(ToTrainer::Reset);
        }
        let why = why.to_string();
        let said = format!("{}{}.", why[..1].to_uppercase(), &why[1..]);
        self.end_awaited(RunEnded::Failed(said.clone()));
        self.run.update(|view| {
            view.reset();
            view.state = RunState::Idle;
            view.failure = Some(said);
        });
    }

    /// The runs table's Continue: unless this tab is training (it would lose its place).
    fn continue_from_the_table(self, run: u64) {
        if self.running() {
            self.refused(
                "Pause or stop the run in progress before continuing another.".to_string(),
            );
        } else {
            self.continue_run(run, self.backend());
        }
    }

    /// The tab's run, deleted from the runs table (or found deleted by a save): its training
    /// stops here.
    fn let_go_of_a_deleted_run(self, run: u64) {
        let said = format!(
            "Run {} was deleted; its training stopped.",
            crate::run_store::short_name(run)
        );
        self.let_go_of(run, RunEnded::Deleted, said);
    }

    /// The tab's run `run` was let go in its store (`ended`): its worker stops, and the panel
    /// says it.
    fn let_go_of(self, run: u64, ended: RunEnded, said: String) {
        self.end_awaited_if(run, ended);
        if self.has_worker() {
            self.send(ToTrainer::Reset);
        }
        self.run.update(|view| {
            view.reset();
            view.state = RunState::Idle;
            view.notice(said, false);
        });
    }

    /// A run file saved by this page or by `vit train`: checked in the worker, where it runs.
    pub fn resume_file(self, bytes: Vec<u8>) {
        self.end_awaited(RunEnded::LetGo);
        self.worker.set_value(None);
        self.clear_for_a_new_run();
        self.run.state().set(RunState::Starting);
        spawn_local(async move {
            match self.app.keeper.start_from_file(&bytes).await {
                Ok(run) => self.send_with(
                    ToTrainer::Continue {
                        backend: self.backend(),
                        run,
                    },
                    Some(bytes),
                ),
                Err(why) => self.not_started(why),
            }
        });
    }

    pub fn pause_or_resume(self) {
        let state = self.run.state().get_untracked();
        if state == RunState::Running {
            return self.send(ToTrainer::Pause);
        }
        // After a NaN took the worker back to its last save, or its device failed.
        let worker_failed = state == RunState::Failed;
        spawn_local(async move {
            match self.app.keeper.go_on(worker_failed).await {
                Ok(GoOn::Here) => self.send(ToTrainer::Resume),
                // Another tab moved the run since this tab stopped it: from the stored
                // checkpoint, never from this tab's copy.
                Ok(GoOn::FromStore { record, checkpoint }) => {
                    let (run, step) = (record.id, record.step);
                    self.go_on_from(run, *record, checkpoint, self.backend());
                    self.refused(format!(
                        "Run {} was continued in another tab meanwhile: it goes on from there (step {step}).",
                        crate::run_store::short_name(run)
                    ));
                }
                Ok(GoOn::NotYet) => self.refused(
                    "Not resumed yet: the run's pause is still being kept. Resume again in a moment."
                        .to_string(),
                ),
                Err(error) => self.refused(format!("Not resumed: {error}.")),
            }
        });
    }

    pub fn reset(self) {
        self.end_awaited(RunEnded::LetGo);
        if self.has_worker() {
            self.send(ToTrainer::Reset);
        }
        // The run stays in the runs table, to be continued from there; this tab lets it go.
        self.app.keeper.let_go(self.has_worker());
        self.run.update(RunView::reset);
    }

    /// The tab's run cannot be resumed: its checkpoint goes (its record and weights stay),
    /// unless the run moved on since its checkpoint was found wanting.
    pub fn discard_saved(self) {
        let found_at = self.shown.saved.with_untracked(|saved| match saved {
            Some(Err(SavedProblem::Damaged { revision, .. })) => Some(*revision),
            _ => None,
        });
        if let (Some(run), Some(revision)) = (self.app.keeper.tab_run(), found_at) {
            let keeper = self.app.keeper;
            spawn_local(async move { keeper.forget_checkpoint(run, revision).await });
        }
        self.app.keeper.let_go(self.has_worker());
        self.run.saved().set(None);
    }

    /// A file that was not taken, and why, among the run's notices.
    pub fn refused(self, why: String) {
        self.run.update(|view| view.notice(why, true));
    }

    /// Weights handed to the draw panel (checked there: a bad file leaves the old model).
    pub fn use_weights(self, bytes: Vec<u8>, source: String) {
        self.app.use_weights((bytes, source));
    }

    fn clear_for_a_new_run(self) {
        self.run.update(|view| {
            view.clear();
            view.data = DataProgress::default();
        });
    }

    fn refresh_saved(self) {
        spawn_local(async move {
            let saved = self.app.keeper.offered().await;
            self.run.saved().set(saved);
        });
    }

    /// Keeps a checkpoint the worker sent; the run shows its rest once it is kept.
    fn keep(self, run: u64, rest: Option<RunState>, checkpoint: Vec<u8>, weights: Option<Vec<u8>>) {
        let resting = rest.and_then(Rest::of);
        let view = self.run.get_untracked();
        spawn_local(async move {
            let kept = self
                .app
                .keeper
                .keep(run, view, checkpoint, weights, resting)
                .await;
            match &kept {
                Err(error @ KeeperError::Store(StoreError::Moved { .. })) => {
                    return self.stale(error);
                }
                Err(KeeperError::Store(StoreError::Gone(gone))) => {
                    return self.let_go_of_a_deleted_run(*gone);
                }
                Ok(_) if resting == Some(Rest::Finished) => self.finish_awaited(run),
                Ok(_) => {}
                Err(error) => {
                    if resting == Some(Rest::Finished) {
                        self.end_awaited_if(run, RunEnded::NotKept(error.to_string()));
                    }
                    self.refused(format!("This checkpoint was not kept: {error}."));
                }
            }
            if let Some(state) = rest
                && self.app.keeper.tab_run() == Some(run)
            {
                self.run.state().set(state);
                self.refresh_saved();
            }
        });
    }

    fn follow(self, effect: RunEffect) {
        match effect {
            RunEffect::None => {}
            RunEffect::UseWeights { bytes, source } => self.use_weights(bytes, source),
            RunEffect::Download { bytes, name } => {
                if let Err(error) = offer_download(&bytes, &name) {
                    self.run.update(|view| view.notice(error.to_string(), true));
                }
            }
            RunEffect::RefreshSaved => self.refresh_saved(),
            RunEffect::RestedUnsaved { run, rest } => {
                if let Some(rest) = Rest::of(rest) {
                    self.app.keeper.rested_unsaved(run, rest);
                }
                self.keep_record();
                self.refresh_saved();
            }
            RunEffect::Started { plan: _ } => {
                self.app.keeper.began();
                self.tell_drawing();
                self.keep_record();
            }
            RunEffect::Moved => self.keep_record(),
            RunEffect::Keep {
                run,
                step: _,
                rest,
                checkpoint,
                weights,
            } => self.keep(run, rest, checkpoint, weights),
        }
    }

    /// The run's record follows the view; a run another tab moved stops here.
    fn keep_record(self) {
        let view = self.run.get_untracked();
        spawn_local(async move {
            match self.app.keeper.keep_record(view).await {
                Err(error @ KeeperError::Store(StoreError::Moved { .. })) => self.stale(&error),
                Err(KeeperError::Store(StoreError::Gone(gone))) => {
                    self.let_go_of_a_deleted_run(gone)
                }
                _ => {}
            }
        });
    }

    /// To the worker if there is one; `send_with` starts one first.
    fn tell(self, message: &ToTrainer, bytes: Option<Vec<u8>>) {
        self.worker.with_value(|w| {
            if let Some(w) = w {
                w.send(message, bytes)
            }
        });
    }

    fn tell_drawing(self) {
        let message = ToTrainer::Drawing {
            image: self.app.model_input.get_untracked(),
        };
        self.tell(&message, None);
    }

    fn on_message(self, message: FromTrainer, bytes: Option<Vec<u8>>) {
        if message
            == (FromTrainer::State {
                state: RunState::Idle,
            })
        {
            self.app.keeper.start_ended();
        }
        let mut effect = RunEffect::None;
        self.run.update(|view| effect = view.apply(message, bytes));
        self.follow(effect);
        self.tell_a_failure();
    }

    fn send_with(self, message: ToTrainer, bytes: Option<Vec<u8>>) {
        if !self.has_worker() {
            let spawned = TrainerWorker::spawn(
                self.plan.cpu_workers,
                move |message, bytes| self.on_message(message, bytes),
                move |lost: TrainerLost| {
                    // The worker's wasm is dead: nothing it holds can answer any more. Dropped
                    // later, as this handler belongs to it.
                    spawn_local(async move { self.worker.set_value(None) });
                    // Nothing more comes from it: a start it never began goes, the run it
                    // trained lets its lock go (Continue takes it again).
                    self.app.keeper.worker_lost();
                    let mut effect = RunEffect::None;
                    self.run
                        .update(|view| effect = view.worker_lost(&lost.to_string()));
                    self.follow(effect);
                    self.tell_a_failure();
                },
            );
            match spawned {
                Ok(spawned) => self.worker.set_value(Some(spawned)),
                Err(error) => {
                    self.run.failure().set(Some(error.to_string()));
                    return;
                }
            }
        }
        self.tell(&message, bytes);
    }

    /// The worker hears when the page is hidden or shown again: a hidden page (another tab or
    /// app in front, a page being left) may be ended without another word, so its run is kept
    /// at once and then every [`crate::protocol::KEEP_WHILE_HIDDEN_MS`] of training.
    fn keep_when_hidden(self) {
        let Some(window) = web_sys::window() else {
            return;
        };
        let Some(document) = window.document() else {
            return;
        };
        let seen = document.clone();
        gloo_events::EventListener::new(&document, "visibilitychange", move |_| {
            let hidden = seen.visibility_state() == web_sys::VisibilityState::Hidden;
            self.tell(&ToTrainer::PageHidden { hidden }, None);
        })
        .forget();
        // Left without a change of visibility (a page already hidden and closed, a
        // navigation in some browsers).
        gloo_events::EventListener::new(&window, "pagehide", move |_| {
            self.tell(&ToTrainer::PageHidden { hidden: true }, None);
        })
        .forget();
    }

    /// The drawing goes to a running worker once it has settled, not at every stroke.
    fn send_drawing_when_it_settles(self) {
        let drawing = self.app.model_input;
        let when_settled = WhenSettled::new();
        Effect::new(move |_| {
            drawing.track();
            if self.has_worker() {
                when_settled.run(move || self.tell_drawing());
            }
        });
    }
}
