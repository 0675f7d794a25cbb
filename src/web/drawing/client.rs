//! The page's side of a drawing worker: each request a future with a deadline, and a worker
//! that fails them all when it dies.

use std::rc::Rc;

use futures::future::LocalBoxFuture;

use crate::analysis::ablation::HeadImportance;
use crate::analysis::inference::ModelInsight;
use crate::data::IMAGE_PIXELS;
use crate::model::{HeadsOff, ModelConfig};
use crate::protocol::{BackendKind, FromDrawing, ToDrawing, bytes_to_floats, images_to_bytes};
use crate::web::asker::{AskError, Asker};
use crate::web::link::{LinkError, WorkerRole};

/// Which heads matter: every head switched off in turn, on up to 2,500 test digits.
const HEADS_DEADLINE_MS: u32 = 600_000;
/// Loading compiles every kernel, which takes seconds on a software GPU.
const LOAD_DEADLINE_MS: u32 = 180_000;
/// One classification, test digit or distance slice; a worker that takes longer is lost.
const REQUEST_DEADLINE_MS: u32 = 60_000;

/// An answer and the bytes beside it, or why none came.
pub type Answer = Result<(FromDrawing, Option<Vec<u8>>), AskError>;

/// Where drawing requests go: a worker, or, in the browser tests, a model in this thread
/// ([`super::InThread`]), which only the tests build, so the page's binary holds no model.
pub trait Port {
    /// Sends `request`, with `bytes` beside it, and waits at most `deadline_ms` for the
    /// answer.
    fn request(
        &self,
        request: ToDrawing,
        bytes: Vec<u8>,
        deadline_ms: u32,
    ) -> LocalBoxFuture<'_, Answer>;

    /// Why this port can no longer be used, if it cannot.
    fn failure(&self) -> Option<AskError>;
}

impl Port for Asker<ToDrawing, FromDrawing> {
    fn request(
        &self,
        request: ToDrawing,
        bytes: Vec<u8>,
        deadline_ms: u32,
    ) -> LocalBoxFuture<'_, Answer> {
        Box::pin(Asker::request(self, request, bytes, deadline_ms))
    }

    fn failure(&self) -> Option<AskError> {
        Asker::failure(self)
    }
}

/// Why a drawing request got no answer to show.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DrawingError {
    /// The worker is gone, late, or its device failed: it is not used again.
    #[error(transparent)]
    Worker(#[from] AskError),
    /// The worker's words for why it could not do this (weights that are not a model, a test
    /// chunk that did not load); it goes on.
    #[error("{0}")]
    Refused(String),
    /// An answer of the wrong kind (as Rust prints it) to `to`.
    #[error("the drawing worker answered {answer} to {to}")]
    Unexpected { answer: String, to: &'static str },
    #[error("the classification came back with {found} values instead of {expected}")]
    WrongLength { found: usize, expected: usize },
}

/// A test digit as the worker holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct TestDigit {
    pub index: u32,
    pub label: u8,
    pub image: Vec<u8>,
}

/// A model the page draws with, in a worker of its own; dropping the last handle ends it.
pub struct DrawingWorker {
    port: Box<dyn Port>,
}

impl DrawingWorker {
    /// Starts the worker for `backend`: the page's own binary on the CPU (`drawer.js`), the
    /// `worker` binary in `role=gpu` on WebGPU.
    pub fn spawn(backend: BackendKind) -> Result<Rc<Self>, LinkError> {
        let role = match backend {
            BackendKind::Cpu => WorkerRole::Draw,
            BackendKind::WebGpu => WorkerRole::Gpu,
        };
        let asker = Asker::<ToDrawing, FromDrawing>::spawn(role)?;
        Ok(Rc::new(Self {
            port: Box::new(asker),
        }))
    }

    /// Requests answered by `port` (the browser tests' model in their own thread).
    pub fn on(port: impl Port + 'static) -> Rc<Self> {
        Rc::new(Self {
            port: Box::new(port),
        })
    }

    /// Why this worker can no longer be used, if it cannot.
    pub fn failure(&self) -> Option<AskError> {
        self.port.failure()
    }

    /// A request whose answer `pick` takes apart: a refusal is [`DrawingError::Refused`], an
    /// answer of another kind (which `pick` hands back) is unexpected.
    async fn ask<T>(
        &self,
        request: ToDrawing,
        bytes: Vec<u8>,
        deadline_ms: u32,
        to: &'static str,
        pick: impl FnOnce(FromDrawing, Option<Vec<u8>>) -> Result<T, FromDrawing>,
    ) -> Result<T, DrawingError> {
        let (answer, bytes) = self.port.request(request, bytes, deadline_ms).await?;
        match pick(answer, bytes) {
            Ok(picked) => Ok(picked),
            Err(FromDrawing::Refused { message, .. }) => Err(DrawingError::Refused(message)),
            Err(other) => Err(DrawingError::Unexpected {
                answer: format!("{other:?}"),
                to,
            }),
        }
    }

    /// Builds the model from safetensors `weights` and warms it; what its weights show.
    pub async fn load(&self, weights: &[u8]) -> Result<(ModelConfig, ModelInsight), DrawingError> {
        let request = ToDrawing::Load;
        self.ask(
            request,
            weights.to_vec(),
            LOAD_DEADLINE_MS,
            "weights",
            |answer, _| match answer {
                FromDrawing::Loaded {
                    config, insight, ..
                } => Ok((config, insight)),
                other => Err(other),
            },
        )
        .await
    }

    /// The packed reading of one image (see [`crate::analysis::reading::Reading`]) with the
    /// heads `off` names switched off.
    pub async fn classify(
        &self,
        image: &[u8; IMAGE_PIXELS],
        off: HeadsOff,
    ) -> Result<Vec<f32>, DrawingError> {
        let request = ToDrawing::Classify { off };
        let bytes = images_to_bytes(std::slice::from_ref(image));
        self.ask(
            request,
            bytes,
            REQUEST_DEADLINE_MS,
            "a drawing",
            |answer, bytes| match (answer, bytes) {
                (FromDrawing::Classified, Some(bytes)) => Ok(bytes_to_floats(&bytes)),
                (other, _) => Err(other),
            },
        )
        .await
    }

    /// The packed story of one image through a ViT (see
    /// [`crate::analysis::story::Story`]) with the heads `off` names switched off.
    pub async fn story(
        &self,
        image: &[u8; IMAGE_PIXELS],
        off: HeadsOff,
    ) -> Result<Vec<f32>, DrawingError> {
        let request = ToDrawing::Story { off };
        let bytes = images_to_bytes(std::slice::from_ref(image));
        self.ask(
            request,
            bytes,
            REQUEST_DEADLINE_MS,
            "a story",
            |answer, bytes| match (answer, bytes) {
                (FromDrawing::Story, Some(bytes)) => Ok(bytes_to_floats(&bytes)),
                (other, _) => Err(other),
            },
        )
        .await
    }

    /// Mean attention distance per layer and head over `count` test digits from the
    /// `first`th.
    pub async fn distances(&self, first: u32, count: u32) -> Result<Vec<Vec<f32>>, DrawingError> {
        let request = ToDrawing::Distances { first, count };
        self.ask(
            request,
            Vec::new(),
            REQUEST_DEADLINE_MS,
            "test digits",
            |answer, _| match answer {
                FromDrawing::Distances { values, .. } => Ok(values),
                other => Err(other),
            },
        )
        .await
    }

    /// What the model reads in each of `images`: the digit and its probability.
    pub async fn read(
        &self,
        images: &[[u8; IMAGE_PIXELS]],
    ) -> Result<Vec<(u8, f32)>, DrawingError> {
        let count = u32::try_from(images.len()).unwrap_or(u32::MAX);
        let request = ToDrawing::Read { count };
        self.ask(
            request,
            images_to_bytes(images),
            REQUEST_DEADLINE_MS,
            "digits to read",
            |answer, _| match answer {
                FromDrawing::Read {
                    digits,
                    probabilities,
                    ..
                } if digits.len() == images.len() && probabilities.len() == images.len() => {
                    Ok(digits.into_iter().zip(probabilities).collect())
                }
                other => Err(other),
            },
        )
        .await
    }

    /// The accuracy each head's absence costs on the first `images` test digits, by zero
    /// where `zero`, else by each head's mean (see [`ToDrawing::Heads`]).
    pub async fn heads(&self, images: u32, zero: bool) -> Result<HeadImportance, DrawingError> {
        let request = ToDrawing::Heads { images, zero };
        self.ask(
            request,
            Vec::new(),
            HEADS_DEADLINE_MS,
            "test digits to switch heads off on",
            |answer, _| match answer {
                FromDrawing::Heads { importance, .. } => Ok(importance),
                other => Err(other),
            },
        )
        .await
    }

    /// How many of the first `images` test digits the model reads right, and of how many
    /// (fewer where the first test chunk holds fewer).
    pub async fn score(&self, images: u32) -> Result<(u32, u32), DrawingError> {
        let request = ToDrawing::Score { images };
        self.ask(
            request,
            Vec::new(),
            HEADS_DEADLINE_MS,
            "test digits to score",
            |answer, _| match answer {
                FromDrawing::Scored {
                    correct, images, ..
                } if correct <= images => Ok((correct, images)),
                other => Err(other),
            },
        )
        .await
    }

    /// Test digit `index`, or one at random.
    pub async fn test_digit(&self, index: Option<u32>) -> Result<TestDigit, DrawingError> {
        let request = ToDrawing::TestDigit { index };
        self.ask(
            request,
            Vec::new(),
            REQUEST_DEADLINE_MS,
            "a test digit",
            |answer, bytes| match (answer, bytes) {
                (FromDrawing::TestDigit { index, label, .. }, Some(image))
                    if image.len() == IMAGE_PIXELS =>
                {
                    Ok(TestDigit {
                        index,
                        label,
                        image,
                    })
                }
                (other, _) => Err(other),
            },
        )
        .await
    }
}
