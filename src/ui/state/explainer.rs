//! The worker that explains drawings and compares the ViT with the CNN (`role=explain`),
//! shared by the lab's cards through context: started once, on first use, with the weights in
//! use, given the shipped CNN when a comparison first needs it, started afresh after a failure.

use std::rc::Rc;

use leptos::prelude::*;

use super::ModelHost;
use crate::protocol::BackendKind;
use crate::shipped::SHIPPED_CNN;
use crate::web::explain::ExplainingWorker;
use crate::web::{self, AskError, DrawingError, FetchError, KeptWorker, LinkError};

/// Why the explaining worker gave no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExplainError {
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
pub struct Explainer {
    host: ModelHost,
    /// The worker, and the weights it was given last: provided once for the page, it lives
    /// through every model the page uses, and is given each new one before it is asked.
    worker: StoredValue<KeptWorker<ExplainingWorker>, LocalStorage>,
    /// The worker in `worker` holds the CNN, or has been sent it.
    has_cnn: StoredValue<bool>,
}

impl Explainer {
    pub fn new(host: ModelHost) -> Self {
        Self {
            host,
            worker: StoredValue::new_local(KeptWorker::default()),
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

    /// The worker, with the weights in use: kept from the moment it is given them, so that
    /// requests that come meanwhile go to it, after the weights, rather than each starting a
    /// worker of its own. Given other weights, it lets go of the CNN it held with the old ones.
    async fn worker(self) -> Result<Rc<ExplainingWorker>, ExplainError> {
        let weights = self
            .host
            .weights
            .get_value()
            .ok_or(ExplainError::NoWeights)?;
        let kept = self.worker.get_value();
        let start = || ExplainingWorker::spawn().map_err(ExplainError::from);
        let give = |worker: Rc<ExplainingWorker>, weights: Rc<Vec<u8>>| {
            // Before the weights are sent: a request for the CNN that comes meanwhile sends it
            // again, after them.
            self.has_cnn.set_value(false);
            async move { worker.keep(&weights).await.map_err(ExplainError::from) }
        };
        kept.with_weights(&weights, start, give).await
    }

    /// The worker, with the shipped CNN as well.
    async fn with_cnn(self) -> Result<Rc<ExplainingWorker>, ExplainError> {
        let worker = self.worker().await?;
        if !self.has_cnn.get_value() {
            let bytes = web::fetch_weights(SHIPPED_CNN, |_, _| {}).await?;
            worker.keep_cnn(&bytes).await?;
            self.has_cnn.set_value(true);
        }
        Ok(worker)
    }

    /// After a failure: the next request starts a fresh worker.
    fn forget(self) {
        self.worker.with_value(KeptWorker::forget);
    }

    /// The backend the page draws on, which explanations run on too.
    pub fn backend(self) -> BackendKind {
        self.host
            .engine
            .with_untracked(|engine| engine.as_ref().map(|e| e.backend))
            .unwrap_or(BackendKind::Cpu)
    }
}
