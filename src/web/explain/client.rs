//! The page's side of the explaining worker: each request a future with a deadline.

use std::rc::Rc;

use crate::analysis::explanation::Explanation;
use crate::analysis::occlusion::{Comparison, OcclusionCurves};
use crate::data::IMAGE_PIXELS;
use crate::protocol::{BackendKind, FromExplainer, ToExplainer, images_to_bytes};
use crate::web::asker::{AskError, Asker};
use crate::web::link::{LinkError, WorkerRole};

/// Keeping weights builds nothing.
const KEEP_DEADLINE_MS: u32 = 60_000;
/// An explanation or a comparison: the first builds the model, which compiles every kernel on
/// WebGPU (seconds on a software GPU).
const EXPLAIN_DEADLINE_MS: u32 = 180_000;
/// The occlusion curves: a relevance and twenty classifications per image, in the worker.
const CURVES_DEADLINE_MS: u32 = 600_000;

/// A running explaining worker; dropping it ends the worker.
pub struct ExplainingWorker(Asker<ToExplainer, FromExplainer>);

impl ExplainingWorker {
    pub fn spawn() -> Result<Rc<Self>, LinkError> {
        Ok(Rc::new(Self(Asker::spawn(WorkerRole::Explain)?)))
    }

    /// Why this worker can no longer be used, if it cannot.
    pub fn failure(&self) -> Option<AskError> {
        self.0.failure()
    }

    /// Keeps safetensors `weights` in the worker to explain with (nothing is built yet).
    pub async fn keep(&self, weights: &[u8]) -> Result<(), AskError> {
        let request = ToExplainer::Keep;
        self.0
            .ask(
                request,
                weights.to_vec(),
                KEEP_DEADLINE_MS,
                "weights to keep",
                kept,
            )
            .await
    }

    /// Keeps the CNN's safetensors `weights` in the worker, to compare the ViT with.
    pub async fn keep_cnn(&self, weights: &[u8]) -> Result<(), AskError> {
        let request = ToExplainer::KeepCnn;
        self.0
            .ask(
                request,
                weights.to_vec(),
                KEEP_DEADLINE_MS,
                "a CNN to keep",
                kept,
            )
            .await
    }

    /// The relevance of `image`'s patches for `class` (the prediction when `None`) and the
    /// logit lens, computed on `backend` with the weights kept.
    pub async fn explain(
        &self,
        image: &[u8; IMAGE_PIXELS],
        backend: BackendKind,
        class: Option<u8>,
    ) -> Result<Explanation, AskError> {
        let request = ToExplainer::Explain { backend, class };
        self.ask_about(
            image,
            request,
            "an image to explain",
            |answer| match answer {
                FromExplainer::Explained { explanation, .. } => Ok(explanation),
                other => Err(other),
            },
        )
        .await
    }

    /// The ViT's and the CNN's probabilities for `image` with the patches in `hidden`
    /// blanked, and the ViT's with their tokens dropped, on `backend`.
    pub async fn compare(
        &self,
        image: &[u8; IMAGE_PIXELS],
        hidden: Vec<u16>,
        backend: BackendKind,
    ) -> Result<Comparison, AskError> {
        let request = ToExplainer::Compare { backend, hidden };
        self.ask_about(
            image,
            request,
            "an image to compare on",
            |answer| match answer {
                FromExplainer::Compared { comparison, .. } => Ok(comparison),
                other => Err(other),
            },
        )
        .await
    }

    /// One request about one image (its pixels travel as the request's bytes), answered with
    /// what `pick` takes out of the worker's answer.
    async fn ask_about<T>(
        &self,
        image: &[u8; IMAGE_PIXELS],
        request: ToExplainer,
        what: &'static str,
        pick: impl FnOnce(FromExplainer) -> Result<T, FromExplainer>,
    ) -> Result<T, AskError> {
        let bytes = images_to_bytes(std::slice::from_ref(image));
        self.0
            .ask(request, bytes, EXPLAIN_DEADLINE_MS, what, |answer, _| {
                pick(answer)
            })
            .await
    }

    /// Both models' occlusion curves on the first `images` test digits, on `backend`.
    pub async fn curves(
        &self,
        images: u32,
        backend: BackendKind,
    ) -> Result<OcclusionCurves, AskError> {
        let request = ToExplainer::Curves { backend, images };
        self.0
            .ask(
                request,
                Vec::new(),
                CURVES_DEADLINE_MS,
                "test digits to hide patches of",
                |answer, _| match answer {
                    FromExplainer::Curves { curves, .. } => Ok(curves),
                    other => Err(other),
                },
            )
            .await
    }
}

/// Takes [`FromExplainer::Kept`] apart.
fn kept(answer: FromExplainer, _: Option<Vec<u8>>) -> Result<(), FromExplainer> {
    match answer {
        FromExplainer::Kept => Ok(()),
        other => Err(other),
    }
}
