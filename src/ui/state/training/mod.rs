//! Training as a service of the page, provided once: [`TrainingControl`] (`control.rs`)
//! carries out what the tab's session ([`crate::tab_session`], a pure machine) decides of the
//! worker, the run's lifecycle and its keeping, and holds the run's view in a Leptos store
//! (read by the training panel through its memos, `shown.rs`); the form's plan is
//! [`PlanChoice`]. A
//! card that wants a run (the fine-tuning card) or a run continued or let go (the runs table)
//! asks through [`Training`] and awaits the answer, with no signal between them: a started run
//! is a [`RunHandle`], whose end is answered once, through a oneshot.

mod cards;
mod control;
mod plan_choice;
mod shown;

use std::rc::Rc;

use futures::channel::{mpsc, oneshot};
use leptos::prelude::*;

use super::AppState;
pub use crate::tab_session::{RunEnded, StartError};
use crate::train::TrainingPlan;
pub use control::TrainingControl;
pub use plan_choice::PlanChoice;

/// Provides the service (the worker starts on the first Train, never before), so that a run
/// goes on while another place is shown and the panel finds it as it was.
pub fn provide_training(
    app: AppState,
    initial_plan: Option<TrainingPlan>,
    cpu_workers: Option<usize>,
) {
    let (training, requests) = Training::new();
    provide_context(training);
    provide_context(TrainingControl::new(
        app,
        initial_plan,
        cpu_workers,
        requests,
    ));
}

/// What a card asks of the training panel.
pub enum TrainingRequest {
    /// A run of `plan` from `weights`, answered with its handle or why it did not start.
    Start {
        plan: TrainingPlan,
        weights: Rc<Vec<u8>>,
        answer: oneshot::Sender<Result<RunHandle, StartError>>,
    },
    /// The runs table's Continue: run `0` goes on in the panel, unless a run is under way.
    Continue(u64),
    /// Run `0` was deleted from the runs table: its training stops here.
    Deleted(u64),
    /// The person's digits, which run `0` fine-tuned on, were deleted, and the run let go of
    /// them: its worker, which holds them too, stops.
    DigitsDeleted(u64),
}

/// A run's steps taken and its steps in all, while it is the training panel's run.
pub type RunSteps = Signal<Option<(usize, usize)>>;

/// A run started for a card: its id, its progress while it trains, and its end.
pub struct RunHandle {
    pub run: u64,
    pub steps: RunSteps,
    end: oneshot::Receiver<Result<Vec<u8>, RunEnded>>,
}

impl RunHandle {
    pub fn new(
        run: u64,
        steps: RunSteps,
        end: oneshot::Receiver<Result<Vec<u8>, RunEnded>>,
    ) -> Self {
        Self { run, steps, end }
    }

    /// Its weights once it has finished and been kept, or why it ended before.
    pub async fn finished(self) -> Result<Vec<u8>, RunEnded> {
        // A panel gone without a word let the run go with it.
        self.end.await.unwrap_or(Err(RunEnded::LetGo))
    }
}

/// The door to the training panel, provided once for the page.
#[derive(Clone, Copy)]
pub struct Training {
    requests: StoredValue<mpsc::UnboundedSender<TrainingRequest>, LocalStorage>,
}

impl Training {
    /// The service, and the requests its server (the training panel) takes one at a time.
    pub fn new() -> (Self, mpsc::UnboundedReceiver<TrainingRequest>) {
        let (requests, served) = mpsc::unbounded();
        let requests = StoredValue::new_local(requests);
        (Self { requests }, served)
    }

    /// A run of `plan` from `weights`, as a run of the panel (its progress there, its record in
    /// the runs table): its handle once it is kept and sent to the worker.
    pub async fn start(
        self,
        plan: TrainingPlan,
        weights: Rc<Vec<u8>>,
    ) -> Result<RunHandle, StartError> {
        let (answer, answered) = oneshot::channel();
        let asked = TrainingRequest::Start {
            plan,
            weights,
            answer,
        };
        self.send(asked).map_err(|_| StartError::NoPanel)?;
        answered.await.unwrap_or(Err(StartError::NoPanel))
    }

    /// The runs table's Continue.
    pub fn continue_run(self, run: u64) {
        let _ = self.send(TrainingRequest::Continue(run));
    }

    /// Run `run`, the tab's, was deleted.
    pub fn deleted(self, run: u64) {
        let _ = self.send(TrainingRequest::Deleted(run));
    }

    /// Run `run`, the tab's, let go of the person's digits, which were deleted.
    pub fn digits_deleted(self, run: u64) {
        let _ = self.send(TrainingRequest::DigitsDeleted(run));
    }

    /// `Err` where the panel is gone.
    fn send(self, request: TrainingRequest) -> Result<(), ()> {
        self.requests
            .try_with_value(|requests| requests.unbounded_send(request).map_err(|_| ()))
            .unwrap_or(Err(()))
    }
}
