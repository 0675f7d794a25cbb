//! The page's side of the GPU worker: requests that come back as futures, a worker that
//! fails them all when it dies, and a deadline on each.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use futures::channel::oneshot;
use futures::future::{Either, select};
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, MessageEvent, Worker};

use crate::data::IMAGE_PIXELS;

use super::protocol::{FromGpu, ToGpu};
use crate::protocol::bytes_to_floats;
use crate::web::WORKER_SCRIPT;
use crate::web::global::{describe, sleep_ms};
use crate::web::packet::Packet;

/// Loading compiles every kernel, which takes seconds on a software GPU.
const LOAD_DEADLINE_MS: u32 = 180_000;
/// One classification or distance batch; a GPU that takes longer is treated as lost.
const REQUEST_DEADLINE_MS: u32 = 60_000;

type Answer = Result<(FromGpu, Option<Vec<u8>>), String>;

#[derive(Default)]
struct Shared {
    next_id: Cell<u32>,
    /// Requests held back until the worker says it listens; `None` once it does.
    held: RefCell<Option<Vec<Packet>>>,
    pending: RefCell<HashMap<u32, oneshot::Sender<Answer>>>,
    /// Why the worker can no longer be used, once it cannot.
    dead: RefCell<Option<String>>,
}

impl Shared {
    /// Fails every request waiting, and any that comes later, with `message`.
    fn die(&self, message: String) {
        self.dead.borrow_mut().get_or_insert(message.clone());
        for (_, waiting) in self.pending.borrow_mut().drain() {
            let _ = waiting.send(Err(message.clone()));
        }
    }
}

/// A running GPU worker; dropping it ends the worker.
pub struct GpuWorker {
    worker: Worker,
    shared: Rc<Shared>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(ErrorEvent)>,
}

impl GpuWorker {
    pub fn spawn() -> Result<Rc<Self>, String> {
        let worker = Worker::new(&format!("{WORKER_SCRIPT}?role=gpu"))
            .map_err(|e| format!("the GPU worker did not start: {}", describe(e)))?;
        let shared = Rc::new(Shared {
            held: RefCell::new(Some(Vec::new())),
            ..Shared::default()
        });
        let (state, target) = (shared.clone(), worker.clone());
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let Some(packet) = Packet::read(&event) else {
                return;
            };
            match packet.parse::<FromGpu>() {
                Ok(FromGpu::Ready) => {
                    for held in state.held.borrow_mut().take().unwrap_or_default() {
                        if let Err(error) = held.send_to(&target) {
                            state.die(format!(
                                "the GPU worker refused a request: {}",
                                describe(error)
                            ));
                        }
                    }
                }
                Ok(answer) => {
                    let waiting = answer
                        .id()
                        .and_then(|id| state.pending.borrow_mut().remove(&id));
                    if let Some(waiting) = waiting {
                        let _ = waiting.send(Ok((answer, packet.bytes)));
                    }
                }
                Err(error) => web_sys::console::warn_1(&error.into()),
            }
        });
        let state = shared.clone();
        let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |event: ErrorEvent| {
            event.prevent_default();
            let message = event.message();
            state.die(if message.is_empty() {
                "the GPU worker stopped".to_string()
            } else {
                format!("the GPU worker stopped: {message}")
            });
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Ok(Rc::new(Self {
            worker,
            shared,
            _on_message: on_message,
            _on_error: on_error,
        }))
    }

    /// Why this worker can no longer be used, if it cannot.
    pub fn failure(&self) -> Option<String> {
        self.shared.dead.borrow().clone()
    }

    async fn request(
        &self,
        make: impl FnOnce(u32) -> ToGpu,
        bytes: Vec<u8>,
        deadline_ms: u32,
    ) -> Result<(FromGpu, Option<Vec<u8>>), String> {
        if let Some(message) = self.failure() {
            return Err(message);
        }
        let id = self.shared.next_id.get();
        self.shared.next_id.set(id.wrapping_add(1));
        let (answer, waiting) = oneshot::channel();
        self.shared.pending.borrow_mut().insert(id, answer);
        let packet = Packet::new(&make(id), Some(bytes));
        let held = match self.shared.held.borrow_mut().as_mut() {
            Some(held) => {
                held.push(packet);
                None
            }
            None => Some(packet),
        };
        if let Some(packet) = held
            && let Err(error) = packet.send_to(&self.worker)
        {
            self.shared.die(format!(
                "the GPU worker refused a request: {}",
                describe(error)
            ));
        }
        let answer = match select(waiting, Box::pin(sleep_ms(deadline_ms))).await {
            Either::Left((Ok(answer), _)) => answer?,
            Either::Left((Err(_), _)) => return Err("the GPU worker dropped a request".into()),
            Either::Right(_) => {
                let message = format!("the GPU did not answer within {} s", deadline_ms / 1000);
                self.shared.die(message.clone());
                return Err(message);
            }
        };
        match answer {
            (FromGpu::Failed { message, .. }, _) => {
                // A GPU that failed once is not trusted again.
                self.shared.die(message.clone());
                Err(message)
            }
            answer => Ok(answer),
        }
    }

    /// Builds the model from safetensors `weights` on the GPU and warms it.
    pub async fn load(&self, weights: &[u8]) -> Result<(), String> {
        match self
            .request(|id| ToGpu::Load { id }, weights.to_vec(), LOAD_DEADLINE_MS)
            .await?
        {
            (FromGpu::Loaded { .. }, _) => Ok(()),
            other => Err(format!("the GPU worker answered {other:?} to a load")),
        }
    }

    /// The packed read-back of one image (see [`crate::analysis::inference::PendingClassification`]).
    pub async fn classify(&self, image: &[u8; IMAGE_PIXELS]) -> Result<Vec<f32>, String> {
        match self
            .request(
                |id| ToGpu::Classify { id },
                image.to_vec(),
                REQUEST_DEADLINE_MS,
            )
            .await?
        {
            (FromGpu::Classified { .. }, Some(bytes)) => Ok(bytes_to_floats(&bytes)),
            other => Err(format!(
                "the GPU worker answered {:?} to a drawing",
                other.0
            )),
        }
    }

    /// Mean attention distance per layer and head over `images`.
    pub async fn distances(&self, images: &[[u8; IMAGE_PIXELS]]) -> Result<Vec<Vec<f32>>, String> {
        let bytes = images.iter().flatten().copied().collect();
        let count = images.len();
        match self
            .request(
                |id| ToGpu::Distances { id, images: count },
                bytes,
                REQUEST_DEADLINE_MS,
            )
            .await?
        {
            (FromGpu::Distances { values, .. }, _) => Ok(values),
            other => Err(format!("the GPU worker answered {:?} to a batch", other.0)),
        }
    }
}

impl Drop for GpuWorker {
    fn drop(&mut self) {
        // Events already queued must find no handler rather than a dropped closure.
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.terminate();
        self.shared.die("the GPU worker was closed".into());
    }
}
