//! The page's side of the GPU worker: requests that come back as futures, a worker that
//! fails them all when it dies, and a deadline on each.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use futures::channel::oneshot;
use futures::future::{Either, select};

use crate::analysis::explanation::Explanation;
use crate::analysis::occlusion::{Comparison, OcclusionCurves};
use crate::data::IMAGE_PIXELS;
use crate::protocol::{BackendKind, FromGpu, ToGpu, bytes_to_floats, images_to_bytes};

use crate::web::global::sleep_ms;
use crate::web::link::{Heard, Link, LinkError, WorkerRole};

/// Loading compiles every kernel, which takes seconds on a software GPU.
const LOAD_DEADLINE_MS: u32 = 180_000;
/// One classification or distance batch; a GPU that takes longer is treated as lost.
const REQUEST_DEADLINE_MS: u32 = 60_000;
/// The occlusion curves: a relevance and twenty classifications per image, in the worker.
const CURVES_DEADLINE_MS: u32 = 600_000;

/// Why a request to the GPU worker failed. Any of them but [`GpuError::Dropped`] and
/// [`GpuError::Unexpected`] ends the worker's use: a GPU that failed once is not trusted again.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GpuError {
    /// It did not start, refused a request, or died.
    #[error(transparent)]
    Link(#[from] LinkError),
    #[error("the GPU worker dropped a request")]
    Dropped,
    #[error("the GPU did not answer within {seconds} s")]
    Late { seconds: u32 },
    /// The worker's own words for why the request failed.
    #[error("{0}")]
    Failed(String),
    /// An answer of the wrong kind (`answer` as Rust prints it) to `to` ("a load").
    #[error("the GPU worker answered {answer} to {to}")]
    Unexpected { answer: String, to: &'static str },
    #[error("the GPU worker was closed")]
    Closed,
}

type Answer = Result<(FromGpu, Option<Vec<u8>>), GpuError>;

#[derive(Default)]
struct Shared {
    next_id: Cell<u32>,
    pending: RefCell<HashMap<u32, oneshot::Sender<Answer>>>,
    /// Why the worker can no longer be used, once it cannot.
    dead: RefCell<Option<GpuError>>,
}

impl Shared {
    /// Fails every request waiting, and any that comes later, with `error`.
    fn die(&self, error: GpuError) {
        self.dead.borrow_mut().get_or_insert(error.clone());
        for (_, waiting) in self.pending.borrow_mut().drain() {
            let _ = waiting.send(Err(error.clone()));
        }
    }

    /// What the worker said: an answer goes to the request it answers.
    fn hear(&self, heard: Heard<FromGpu>) {
        match heard {
            Heard::Message(answer, bytes) => {
                let waiting = answer
                    .id()
                    .and_then(|id| self.pending.borrow_mut().remove(&id));
                if let Some(waiting) = waiting {
                    let _ = waiting.send(Ok((answer, bytes)));
                }
            }
            Heard::Trouble(error @ LinkError::Unreadable(_)) => {
                web_sys::console::warn_1(&error.to_string().into())
            }
            Heard::Trouble(error) => self.die(error.into()),
        }
    }
}

/// A running GPU worker; dropping it ends the worker.
pub struct GpuWorker {
    link: Link<ToGpu>,
    shared: Rc<Shared>,
}

impl GpuWorker {
    pub fn spawn() -> Result<Rc<Self>, LinkError> {
        Self::spawn_as(WorkerRole::Gpu)
    }

    /// The same worker, to explain drawings with weights it keeps (`role=explain`).
    pub fn spawn_explainer() -> Result<Rc<Self>, LinkError> {
        Self::spawn_as(WorkerRole::Explain)
    }

    fn spawn_as(role: WorkerRole) -> Result<Rc<Self>, LinkError> {
        let shared = Rc::new(Shared::default());
        let state = shared.clone();
        let link = Link::spawn(role, "", move |heard| state.hear(heard))?;
        Ok(Rc::new(Self { link, shared }))
    }

    /// Why this worker can no longer be used, if it cannot.
    pub fn failure(&self) -> Option<GpuError> {
        self.shared.dead.borrow().clone()
    }

    async fn request(
        &self,
        make: impl FnOnce(u32) -> ToGpu,
        bytes: Vec<u8>,
        deadline_ms: u32,
    ) -> Answer {
        if let Some(error) = self.failure() {
            return Err(error);
        }
        let id = self.shared.next_id.get();
        self.shared.next_id.set(id.wrapping_add(1));
        let (answer, waiting) = oneshot::channel();
        self.shared.pending.borrow_mut().insert(id, answer);
        if let Err(error) = self.link.send(&make(id), Some(bytes)) {
            self.shared.die(error.into());
        }
        let answer = match select(waiting, Box::pin(sleep_ms(deadline_ms))).await {
            Either::Left((Ok(answer), _)) => answer?,
            Either::Left((Err(_), _)) => return Err(GpuError::Dropped),
            Either::Right(_) => {
                let error = GpuError::Late {
                    seconds: deadline_ms / 1000,
                };
                self.shared.die(error.clone());
                return Err(error);
            }
        };
        match answer {
            (FromGpu::Failed { message, .. }, _) => {
                // A GPU that failed once is not trusted again.
                let error = GpuError::Failed(message);
                self.shared.die(error.clone());
                Err(error)
            }
            answer => Ok(answer),
        }
    }

    /// A request whose answer `pick` takes apart; an answer of another kind (which `pick`
    /// hands back) is [`GpuError::Unexpected`] to `to`.
    async fn ask<T>(
        &self,
        make: impl FnOnce(u32) -> ToGpu,
        bytes: Vec<u8>,
        deadline_ms: u32,
        to: &'static str,
        pick: impl FnOnce(FromGpu, Option<Vec<u8>>) -> Result<T, FromGpu>,
    ) -> Result<T, GpuError> {
        let (answer, bytes) = self.request(make, bytes, deadline_ms).await?;
        pick(answer, bytes).map_err(|other| GpuError::Unexpected {
            answer: format!("{other:?}"),
            to,
        })
    }

    /// Builds the model from safetensors `weights` on the GPU and warms it.
    pub async fn load(&self, weights: &[u8]) -> Result<(), GpuError> {
        let make = |id| ToGpu::Load { id };
        self.ask(
            make,
            weights.to_vec(),
            LOAD_DEADLINE_MS,
            "a load",
            |answer, _| match answer {
                FromGpu::Loaded { .. } => Ok(()),
                other => Err(other),
            },
        )
        .await
    }

    /// The packed read-back of one image (see [`crate::analysis::inference::PendingClassification`]).
    pub async fn classify(&self, image: &[u8; IMAGE_PIXELS]) -> Result<Vec<f32>, GpuError> {
        let make = |id| ToGpu::Classify { id };
        let bytes = images_to_bytes(std::slice::from_ref(image));
        self.ask(
            make,
            bytes,
            REQUEST_DEADLINE_MS,
            "a drawing",
            |answer, bytes| match (answer, bytes) {
                (FromGpu::Classified { .. }, Some(bytes)) => Ok(bytes_to_floats(&bytes)),
                (other, _) => Err(other),
            },
        )
        .await
    }

    /// Keeps safetensors `weights` in the worker to explain with (nothing is built yet).
    pub async fn keep(&self, weights: &[u8]) -> Result<(), GpuError> {
        let make = |id| ToGpu::Keep { id };
        self.ask(
            make,
            weights.to_vec(),
            REQUEST_DEADLINE_MS,
            "weights to keep",
            |answer, _| match answer {
                FromGpu::Loaded { .. } => Ok(()),
                other => Err(other),
            },
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
    ) -> Result<Explanation, GpuError> {
        let make = |id| ToGpu::Explain { id, backend, class };
        let bytes = images_to_bytes(std::slice::from_ref(image));
        self.ask(
            make,
            bytes,
            LOAD_DEADLINE_MS,
            "an image to explain",
            |answer, _| match answer {
                FromGpu::Explained { explanation, .. } => Ok(explanation),
                other => Err(other),
            },
        )
        .await
    }

    /// Keeps the CNN's safetensors `weights` in the worker, to compare the ViT with.
    pub async fn keep_cnn(&self, weights: &[u8]) -> Result<(), GpuError> {
        let make = |id| ToGpu::KeepCnn { id };
        self.ask(
            make,
            weights.to_vec(),
            REQUEST_DEADLINE_MS,
            "a CNN to keep",
            |answer, _| match answer {
                FromGpu::Loaded { .. } => Ok(()),
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
    ) -> Result<Comparison, GpuError> {
        let make = |id| ToGpu::Compare {
            id,
            backend,
            hidden,
        };
        let bytes = images_to_bytes(std::slice::from_ref(image));
        self.ask(
            make,
            bytes,
            LOAD_DEADLINE_MS,
            "an image to compare on",
            |answer, _| match answer {
                FromGpu::Compared { comparison, .. } => Ok(comparison),
                other => Err(other),
            },
        )
        .await
    }

    /// Both models' occlusion curves on `images` and their `labels`, on `backend`.
    pub async fn curves(
        &self,
        images: &[[u8; IMAGE_PIXELS]],
        labels: &[u8],
        backend: BackendKind,
    ) -> Result<OcclusionCurves, GpuError> {
        let count = images.len();
        let make = |id| ToGpu::Curves {
            id,
            backend,
            images: count,
        };
        let mut bytes = images_to_bytes(images);
        bytes.extend_from_slice(labels);
        self.ask(
            make,
            bytes,
            CURVES_DEADLINE_MS,
            "images to hide patches of",
            |answer, _| match answer {
                FromGpu::Curves { curves, .. } => Ok(curves),
                other => Err(other),
            },
        )
        .await
    }

    /// Mean attention distance per layer and head over `images`.
    pub async fn distances(
        &self,
        images: &[[u8; IMAGE_PIXELS]],
    ) -> Result<Vec<Vec<f32>>, GpuError> {
        let count = images.len();
        let make = |id| ToGpu::Distances { id, images: count };
        self.ask(
            make,
            images_to_bytes(images),
            REQUEST_DEADLINE_MS,
            "a batch",
            |answer, _| match answer {
                FromGpu::Distances { values, .. } => Ok(values),
                other => Err(other),
            },
        )
        .await
    }
}

impl Drop for GpuWorker {
    fn drop(&mut self) {
        // The link ends the worker after this; whoever still waits hears why.
        self.shared.die(GpuError::Closed);
    }
}
