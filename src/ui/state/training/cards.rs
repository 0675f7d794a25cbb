//! The cards' side of the training service: the starts they asked and are not yet answered,
//! and where the end of the run a card awaits is told, once.

use futures::channel::oneshot;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{RunEnded, RunHandle, RunSteps, StartError};
use crate::run_store::RunId;
use crate::tab_session::AskId;
use crate::ui::state::RunKeeper;

#[derive(Clone, Copy)]
pub(super) struct Cards(StoredValue<Asks, LocalStorage>);

#[derive(Default)]
struct Asks {
    unanswered: Vec<(AskId, oneshot::Sender<Result<RunHandle, StartError>>)>,
    asked: AskId,
    awaiting: Option<oneshot::Sender<Result<Vec<u8>, RunEnded>>>,
}

impl Cards {
    pub(super) fn new() -> Self {
        Self(StoredValue::new_local(Asks::default()))
    }

    /// A card's start, to answer later: its id.
    pub(super) fn ask(self, answer: oneshot::Sender<Result<RunHandle, StartError>>) -> AskId {
        let asked = self.0.try_update_value(|asks| {
            asks.asked += 1;
            asks.unanswered.push((asks.asked, answer));
            asks.asked
        });
        asked.unwrap_or_default()
    }

    /// The card that asked `ask` hears whether its run started (with its steps while it
    /// trains); one that did is awaited.
    pub(super) fn answer(
        self,
        ask: AskId,
        answer: Result<RunId, StartError>,
        steps: impl FnOnce(RunId) -> RunSteps,
    ) {
        let asked = self.0.try_update_value(|asks| {
            let at = asks.unanswered.iter().position(|(id, _)| *id == ask)?;
            Some(asks.unanswered.remove(at).1)
        });
        let Some(Some(asked)) = asked else {
            return;
        };
        let handle = answer.map(|run| {
            let (tell, end) = oneshot::channel();
            self.0.update_value(|asks| asks.awaiting = Some(tell));
            RunHandle::new(run, steps(run), end)
        });
        let _ = asked.send(handle);
    }

    /// The awaited run ended without its weights.
    pub(super) fn end(self, ended: RunEnded) {
        if let Some(tell) = self.awaiting() {
            let _ = tell.send(Err(ended));
        }
    }

    /// The awaited run `run` finished and was kept: its card gets its weights.
    pub(super) fn finish(self, run: RunId, runs: RunKeeper) {
        if let Some(tell) = self.awaiting() {
            spawn_local(async move {
                let _ = tell.send(runs.weights(run).await.map_err(RunEnded::NoWeights));
            });
        }
    }

    fn awaiting(self) -> Option<oneshot::Sender<Result<Vec<u8>, RunEnded>>> {
        self.0
            .try_update_value(|asks| asks.awaiting.take())
            .flatten()
    }
}
