//! The worker that explains drawings and compares the ViT with the CNN (`role=explain`),
//! shared by the lab's cards through context: started once, on first use, with the weights in
//! use, given the shipped CNN when a comparison first needs it, started afresh after a failure.

use std::rc::Rc;

use leptos::prelude::*;

use crate::protocol::BackendKind;
use crate::shipped::SHIPPED_CNN;
use crate::ui::state::LabState;
use crate::web::explain::ExplainingWorker;
use crate::web::{self, AskError, DrawingError, FetchError, LinkError};

/// Why the explaining worker gave no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(super) enum ExplainError {
    #[error("no weights in use")]
    NoWeights,
    #[error(transparent)]
    Start(#[from] LinkError),
    #[error(transparent)]
    Ask(#[from] AskError),
    #[error("the CNN to compare with did not load: {0}")]
    Cnn(#[from] FetchError),
    /// A worker of the page's own binary (which measures which heads matter) failed.
    #[error(transparent)]
    Drawing(#[from] DrawingError),
}

#[derive(Clone, Copy)]
pub(super) struct Explainer {
    lab: LabState,
    worker: StoredValue<Option<Rc<ExplainingWorker>>, LocalStorage>,
    /// The worker in `worker` holds the CNN, or has been sent it.
    has_cnn: StoredValue<bool>,
}

impl Explainer {
    pub fn new(lab: LabState) -> Self {
        Self {
            lab,
            worker: StoredValue::new_local(None),
            has_cnn: StoredValue::new(false),
        }
    }

    /// `request` put to the worker (given the shipped CNN first where `cnn`). A worker whose
    /// request failed is started afresh next time.
    pub async fn ask<T, F>(
        self,
        cnn: bool,
        request: impl FnOnce(Rc<ExplainingWorker>) -> F,
    ) -> Result<T, ExplainError>
    where
        F: Future<Output = Result<T, AskError>>,
    {
        let worker = if cnn {
            self.with_cnn().await
        } else {
            self.worker().await
        };
        let answer = match worker {
            Ok(worker) => request(worker).await.map_err(ExplainError::from),
            Err(why) => Err(why),
        };
        if answer.is_err() {
            self.forget();
        }
        answer
    }

    /// The worker, with the weights in use. It is kept the moment it starts, before it has
    /// the weights: requests that come meanwhile go to it, after the weights, rather than each
    /// starting a worker of its own.
    async fn worker(self) -> Result<Rc<ExplainingWorker>, ExplainError> {
        if let Some(worker) = self.worker.get_value().filter(|w| w.failure().is_none()) {
            return Ok(worker);
        }
        let weights = self
            .lab
            .weights
            .get_value()
            .ok_or(ExplainError::NoWeights)?;
        let worker = ExplainingWorker::spawn()?;
        self.worker.set_value(Some(worker.clone()));
        self.has_cnn.set_value(false);
        worker.keep(&weights).await?;
        Ok(worker)
    }

    /// The worker, with the shipped CNN as well.
    async fn with_cnn(self) -> Result<Rc<ExplainingWorker>, ExplainError> {
        let worker = self.worker().await?;
        if !self.has_cnn.get_value() {
            let bytes = web::fetch_bytes(SHIPPED_CNN, |_, _| {}).await?;
            worker.keep_cnn(&bytes).await?;
            self.has_cnn.set_value(true);
        }
        Ok(worker)
    }

    /// After a failure: the next request starts a fresh worker.
    fn forget(self) {
        self.worker.set_value(None);
    }

    /// The backend the page draws on, which explanations run on too.
    pub fn backend(self) -> BackendKind {
        self.lab
            .engine
            .with_untracked(|engine| engine.as_ref().map(|e| e.backend))
            .unwrap_or(BackendKind::Cpu)
    }
}
