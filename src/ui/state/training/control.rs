//! The page's training service: it carries out what the tab's session
//! ([`crate::tab_session::TabSession`], pure and natively tested) decides, and hands back what
//! came of it. It holds what the session cannot: the worker, the run's view in a Leptos store
//! (read by the panel through `shown.rs`), the cards' channels, and the keeper's calls.

use futures::StreamExt;
use futures::channel::mpsc;
use leptos::prelude::*;
use leptos::task::spawn_local;
use reactive_stores::Store;

use super::cards::Cards;
use super::plan_choice::PlanChoice;
use super::shown::Shown;
use super::{RunSteps, TrainingRequest};
use crate::protocol::{BackendKind, RunState, ToTrainer};
use crate::run_store::RunId;
use crate::run_view::{RunView, WorkerLoss};
use crate::tab_session::{Command, Event, Page, TabSession, WorkerId};
use crate::train::TrainingPlan;
use crate::ui::state::{AppState, WhenSettled};
use crate::web::{TrainerWorker, offer_download, on_page_hidden};

#[derive(Clone, Copy)]
pub struct TrainingControl {
    app: AppState,
    pub plan: PlanChoice,
    pub run: Store<RunView>,
    pub shown: Shown,
    session: StoredValue<TabSession, LocalStorage>,
    worker: StoredValue<Option<TrainerWorker>, LocalStorage>,
    cards: Cards,
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
            session: StoredValue::new_local(TabSession::default()),
            worker: StoredValue::new_local(None),
            cards: Cards::new(),
        };
        trainer.on(Event::Opened);
        // A hidden page may be ended without another word: its run is kept at once.
        on_page_hidden(move |hidden| trainer.on(Event::PageHidden(hidden)));
        trainer.send_drawing_when_it_settles();
        trainer.serve(requests);
        trainer
    }

    /// One event of the tab's session: the view changes, and its commands are carried out.
    pub fn on(self, event: Event) {
        let page = Page {
            tab_run: self.app.keeper.tab_run(),
            backend: self.backend(),
        };
        let quiet = matches!(event, Event::DrawingSettled | Event::PageHidden(_));
        let mut commands = Vec::new();
        let step = |view: &mut RunView| {
            self.session
                .update_value(|session| commands = session.on(view, page, event))
        };
        // What leaves the view as it was does not redraw the panel.
        if quiet {
            self.run.update_untracked(step);
        } else {
            self.run.update(step);
        }
        commands.into_iter().for_each(|command| self.carry(command));
    }

    /// What other cards ask ([`crate::ui::state::Training`]), one request at a time.
    fn serve(self, mut requests: mpsc::UnboundedReceiver<TrainingRequest>) {
        spawn_local(async move {
            while let Some(request) = requests.next().await {
                self.on(match request {
                    TrainingRequest::Start {
                        plan,
                        weights,
                        answer,
                    } => Event::CardStart {
                        ask: self.cards.ask(answer),
                        plan,
                        weights: weights.to_vec(),
                    },
                    TrainingRequest::Continue(run) => Event::CardContinue(run),
                    TrainingRequest::Deleted(run) => Event::RunDeleted(run),
                    TrainingRequest::DigitsDeleted(run) => Event::DigitsDeleted(run),
                });
            }
        });
    }

    /// One command of the session. What the keeper answers comes back as an event.
    fn carry(self, command: Command) {
        match command {
            Command::StartWorker(id) => self.start_worker(id),
            Command::EndWorker => self.worker.set_value(None),
            Command::Send(message, bytes) => self.tell(&message, bytes),
            Command::SendDrawing => {
                let image = self.app.drawing.model_input.get_untracked();
                self.tell(&ToTrainer::Drawing { image }, None);
            }
            Command::Keeper(asked) => self.app.keeper.carry(asked, move |event| self.on(event)),
            Command::AnswerCard { ask, answer } => {
                self.cards.answer(ask, answer, |run| self.steps_of(run))
            }
            Command::EndCard(ended) => self.cards.end(ended),
            Command::FinishCard(run) => self.cards.finish(run, self.app.keeper),
            Command::UseWeights { bytes, source } => self.app.use_weights((bytes, source)),
            Command::Download { bytes, name } => {
                if let Err(error) = offer_download(&bytes, &name) {
                    self.refused(error.to_string());
                }
            }
        }
    }

    /// A fresh worker, whose words and death come back as events of its own.
    fn start_worker(self, id: WorkerId) {
        let spawned = TrainerWorker::spawn(
            self.plan.cpu_workers,
            move |message, bytes| self.on(Event::Worker(id, message, bytes)),
            // Handled later: the worker is dropped then, and this handler belongs to it.
            move |lost| {
                let lost = WorkerLoss::Died(lost.to_string());
                spawn_local(async move { self.on(Event::WorkerLost(id, lost)) })
            },
        );
        match spawned {
            Ok(worker) => self.worker.set_value(Some(worker)),
            Err(why) => {
                self.worker.set_value(None);
                let lost = WorkerLoss::NotStarted(why.to_string());
                spawn_local(async move { self.on(Event::WorkerLost(id, lost)) });
            }
        }
    }

    fn tell(self, message: &ToTrainer, bytes: Option<Vec<u8>>) {
        self.worker.with_value(|worker| {
            if let Some(worker) = worker {
                worker.send(message, bytes)
            }
        });
    }

    /// Run `run`'s steps taken and in all, while it is the panel's run.
    fn steps_of(self, run: RunId) -> RunSteps {
        let (keeper, report) = (self.app.keeper, self.shown.report);
        Signal::derive(move || {
            (keeper.tab_run() == Some(run))
                .then(|| report.with(|r| r.as_ref().map(|r| (r.point.step, r.total_steps))))
                .flatten()
        })
    }

    /// The drawing goes to a running worker once it has settled, not at every stroke.
    fn send_drawing_when_it_settles(self) {
        let drawing = self.app.drawing.model_input;
        let when_settled = WhenSettled::new();
        Effect::new(move |_| {
            drawing.track();
            when_settled.run(move || self.on(Event::DrawingSettled));
        });
    }

    pub fn app(self) -> AppState {
        self.app
    }

    pub fn has_worker(self) -> bool {
        self.session.with_value(TabSession::has_worker)
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

    /// Train, with the form's plan.
    pub fn start(self) {
        self.on(Event::Train(self.plan.form.get_untracked()));
    }

    /// A file that was not taken, and why, among the run's notices.
    pub fn refused(self, why: String) {
        self.run.update(|view| view.notice(why, true));
    }
}
