//! A card's question to the explaining worker, the one way every card asks it: asked now or
//! once the drawing has settled, only the newest question's answer kept (an older one that
//! comes late is dropped), each answer in the worker client's time limit.

use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::protocol::BackendKind;
use crate::ui::state::{ExplainError, Explainer, Newest, WhenSettled};
use crate::web::AskError;
use crate::web::explain::ExplainingWorker;

/// Where a card's newest question stands.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Answer<A> {
    /// Nothing asked (or what was asked no longer applies).
    Waiting,
    /// Asked; the answer has not come.
    Asking,
    Ready(A),
    Failed(ExplainError),
}

impl<A> Answer<A> {
    pub fn ready(&self) -> Option<&A> {
        match self {
            Self::Ready(answer) => Some(answer),
            _ => None,
        }
    }

    /// The card's `data-state`, which the tests wait on.
    pub fn state(&self) -> &'static str {
        match self {
            Self::Waiting => "waiting",
            Self::Asking => "asking",
            Self::Ready(_) => "ready",
            Self::Failed(_) => "failed",
        }
    }
}

/// One card's line of questions (see the module doc).
pub(super) struct Question<A: 'static> {
    answer: RwSignal<Answer<A>>,
    newest: Newest,
    settle: WhenSettled,
    explainer: Explainer,
}

impl<A: 'static> Clone for Question<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A: 'static> Copy for Question<A> {}

impl<A: Clone + Send + Sync + 'static> Question<A> {
    /// A question to the explaining worker in the context.
    pub fn new() -> Self {
        Self {
            answer: RwSignal::new(Answer::Waiting),
            newest: Newest::new(),
            settle: WhenSettled::new(),
            explainer: expect_context::<Explainer>(),
        }
    }

    pub fn answer(self) -> ReadSignal<Answer<A>> {
        self.answer.read_only()
    }

    /// Asks now, dropping any question waiting or unanswered: `request` gets the worker
    /// (holding the shipped CNN as well where `cnn`) and the backend the page draws on.
    pub fn ask<F>(
        self,
        cnn: bool,
        request: impl FnOnce(Rc<ExplainingWorker>, BackendKind) -> F + 'static,
    ) where
        F: Future<Output = Result<A, AskError>>,
    {
        self.settle.cancel();
        let ticket = self.newest.ticket();
        self.answer.set(Answer::Asking);
        let backend = self.explainer.backend();
        let explainer = self.explainer;
        let answer = self.answer;
        spawn_local(async move {
            let answered = explainer
                .ask(cnn, move |worker| request(worker, backend))
                .await;
            if ticket.is_newest() {
                answer.set(match answered {
                    Ok(ready) => Answer::Ready(ready),
                    Err(why) => Answer::Failed(why),
                });
            }
        });
    }

    /// Runs `then` (which asks) once the drawing has stayed as it is for a moment; a newer
    /// call, an [`ask`](Self::ask) or a [`forget`](Self::forget) drops it. The answer shown
    /// meanwhile stays.
    pub fn when_settled(self, then: impl FnOnce() + 'static) {
        self.settle.run(then);
    }

    /// Nothing to ask about any more: drops what is waiting or unanswered.
    pub fn forget(self) {
        self.settle.cancel();
        self.newest.ticket();
        self.answer.set(Answer::Waiting);
    }
}
