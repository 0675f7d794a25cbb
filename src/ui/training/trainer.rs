//! The training run as the panel drives it: the worker it talks to (started on first use, so
//! a visit that only draws never loads it), the run's view in a Leptos store, and what the
//! panel's buttons do. Shared with the panel's parts through context.

use leptos::prelude::*;
use leptos::task::spawn_local;
use reactive_stores::Store;

use super::plan_choice::PlanChoice;
use super::shown::Shown;
use crate::protocol::{
    BackendKind, DataProgress, FromTrainer, RunState, ToTrainer, WeightsPurpose,
};
use crate::run_view::{RunEffect, RunView, RunViewStoreFields};
use crate::train::TrainingPlan;
use crate::ui::state::{AppState, Interest};
use crate::ui::widgets::offer_download;
use crate::web::{
    self, RunHold, TrainerLost, TrainerWorker, forget_tab_run, hold_run, new_run_id, saved_run,
    set_tab_run, tab_run,
};

/// How long the drawing must stay unchanged before a running worker is sent it.
const DRAWING_SETTLES_MS: u32 = 500;

#[derive(Clone, Copy)]
pub(super) struct Trainer {
    app: AppState,
    pub plan: PlanChoice,
    pub run: Store<RunView>,
    pub shown: Shown,
    worker: StoredValue<Option<TrainerWorker>, LocalStorage>,
    /// The lock on the tab's run, so that no other tab continues it meanwhile.
    hold: StoredValue<Option<RunHold>, LocalStorage>,
}

impl Trainer {
    pub fn new(app: AppState, initial_plan: Option<TrainingPlan>) -> Self {
        let run = Store::new(RunView::default());
        let trainer = Self {
            app,
            plan: PlanChoice::new(app.preferred, initial_plan),
            run,
            shown: Shown::of(run),
            worker: StoredValue::new_local(None),
            hold: StoredValue::new_local(None),
        };
        trainer.adopt_an_earlier_pages_run();
        trainer.refresh_saved();
        trainer.send_drawing_when_it_settles();
        trainer.continue_what_the_table_asks();
        trainer
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
        if let Err(message) = plan.validate() {
            self.run
                .failure()
                .set(Some(format!("This plan cannot run: {message}")));
            return;
        }
        self.clear_for_a_new_run();
        let run = self.app.keeper.prepare(new_run_id());
        self.hold(run);
        self.send(ToTrainer::Start {
            plan,
            backend: self.backend(),
            run,
        });
    }

    /// Continues the tab's run from its checkpoint.
    pub fn resume_saved(self, backend: Option<BackendKind>) {
        if let Some(run) = tab_run() {
            self.continue_run(run, backend);
        }
    }

    /// Takes the lock on run `run` (a new one: no other tab can hold it) in the background.
    fn hold(self, run: u64) {
        self.hold.set_value(None);
        spawn_local(async move {
            if let Ok(hold) = hold_run(run).await {
                self.hold.set_value(hold);
            }
        });
    }

    /// Continues run `run` from its checkpoint, in its own record; it becomes the tab's run,
    /// unless another tab is training it.
    fn continue_run(self, run: u64, backend: Option<BackendKind>) {
        spawn_local(async move {
            let held_here = self.hold.with_value(|h| h.as_ref().map(|h| h.run)) == Some(run);
            if !held_here {
                match hold_run(run).await {
                    Ok(hold) => self.hold.set_value(hold),
                    Err(elsewhere) => {
                        let message = format!("Not continued: {elsewhere}.");
                        return self.run.failure().set(Some(message));
                    }
                }
            }
            // A fresh worker: the old one may have died with its device.
            self.worker.set_value(None);
            self.run.update(RunView::clear);
            set_tab_run(run);
            let keeper = self.app.keeper;
            keeper.resume(run).await;
            let timeline = keeper.timeline();
            self.run.update(|view| view.timeline = timeline);
            self.send(ToTrainer::ResumeSaved { backend, run });
        });
    }

    /// The runs table's Continue: unless this tab is training (it would lose its place).
    fn continue_what_the_table_asks(self) {
        let asked = self.app.keeper.continue_asked;
        Effect::new(move |_| {
            let Some(run) = asked.get() else { return };
            asked.set(None);
            if self.running() {
                self.refused(
                    "Pause or stop the run in progress before continuing another.".to_string(),
                );
            } else {
                self.continue_run(run, self.backend());
            }
        });
    }

    /// A run saved by an earlier version of the page (one for the whole browser) becomes the
    /// checkpoint of its record, and the run of the first tab that finds it.
    fn adopt_an_earlier_pages_run(self) {
        if tab_run().is_some() {
            return;
        }
        spawn_local(async move {
            let legacy_record = match web::RunLog::open().await {
                Ok(log) => log.take_legacy_current().await,
                Err(_) => None,
            };
            let run = legacy_record.unwrap_or_else(new_run_id);
            if saved_run::adopt_legacy_run(run).await {
                set_tab_run(run);
                self.app.keeper.checkpointed(run, true);
                self.refresh_saved();
            }
        });
    }

    /// A run file saved by this page or by `vit train`: checked in the worker, where it runs.
    pub fn resume_file(self, bytes: Vec<u8>) {
        self.worker.set_value(None);
        self.clear_for_a_new_run();
        let run = self.app.keeper.prepare(new_run_id());
        self.hold(run);
        self.send_with(
            ToTrainer::ResumeFile {
                backend: self.backend(),
                run,
            },
            Some(bytes),
        );
    }

    pub fn pause_or_resume(self) {
        match self.run.state().get_untracked() {
            RunState::Running => self.send(ToTrainer::Pause),
            _ => self.send(ToTrainer::Resume),
        }
    }

    pub fn reset(self) {
        if self.has_worker() {
            self.send(ToTrainer::Reset);
        }
        // The run stays in the runs table, to be continued from there; this tab lets it go.
        forget_tab_run();
        self.hold.set_value(None);
        self.app.keeper.forget_current();
        self.run.update(RunView::reset);
    }

    /// The tab's run cannot be resumed: its checkpoint goes (its record and weights stay).
    pub fn discard_saved(self) {
        if let Some(run) = tab_run() {
            forget_tab_run();
            self.app.keeper.checkpointed(run, false);
            spawn_local(saved_run::forget_run(run));
        }
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
        self.app.keeper.forget_current();
    }

    fn refresh_saved(self) {
        spawn_local(async move {
            let saved = match tab_run() {
                Some(run) => saved_run::saved_summary(run).await,
                None => None,
            };
            self.run.saved().set(saved);
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
            RunEffect::Kept { run } => {
                set_tab_run(run);
                self.app.keeper.checkpointed(run, true);
                self.refresh_saved();
            }
            RunEffect::KeepWeights { bytes } => self.app.keeper.keep_weights(bytes),
        }
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
        let interest = Interest::of(&message);
        if matches!(interest, Interest::Started(_)) {
            self.tell_drawing();
        }
        let mut effect = RunEffect::None;
        self.run.update(|view| effect = view.apply(message, bytes));
        let keeper = self.app.keeper;
        if self.run.with_untracked(|view| keeper.after(interest, view)) {
            let keep = ToTrainer::ExportWeights {
                purpose: WeightsPurpose::Keep,
            };
            self.tell(&keep, None);
        }
        self.follow(effect);
    }

    fn send_with(self, message: ToTrainer, bytes: Option<Vec<u8>>) {
        if !self.has_worker() {
            let spawned = TrainerWorker::spawn(
                move |message, bytes| self.on_message(message, bytes),
                move |lost: TrainerLost| {
                    // The worker's wasm is dead: nothing it holds can answer any more. Dropped
                    // later, as this handler belongs to it.
                    spawn_local(async move { self.worker.set_value(None) });
                    let mut effect = RunEffect::None;
                    self.run
                        .update(|view| effect = view.worker_lost(&lost.to_string()));
                    self.follow(effect);
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

    /// The drawing goes to a running worker once it has settled, not at every stroke.
    fn send_drawing_when_it_settles(self) {
        let drawing = self.app.model_input;
        let timer = StoredValue::new_local(None::<gloo_timers::callback::Timeout>);
        Effect::new(move |_| {
            drawing.track();
            if self.has_worker() {
                let settled = gloo_timers::callback::Timeout::new(DRAWING_SETTLES_MS, move || {
                    self.tell_drawing()
                });
                timer.set_value(Some(settled));
            }
        });
    }
}
