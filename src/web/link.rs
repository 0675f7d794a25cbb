//! One worker seen from whoever started it (the page, or the training worker for its helper):
//! spawned from its script (the heavy workers' per [`heavy_worker_script`]) in its role,
//! packets held until the worker says it listens (a message posted before that would be lost),
//! packets read into the worker's typed messages, its `error` event turned into one
//! [`LinkError`], and the worker ended when the link is dropped. Each client
//! (`drawing/client.rs`, `explain/client.rs`, `helper/client.rs`, `trainer/client.rs`) is a link
//! and what it does with what it hears.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::rc::Rc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, MessageEvent, Worker, WorkerOptions, WorkerType};

use crate::protocol::{Called, Greeting};

use super::global::describe;
use super::packet::{Packet, PacketError};

/// The heavy workers' script where the browser lacks relaxed SIMD: Trunk's loader shim for
/// the `worker` binary, beside the page.
pub const WORKER_SCRIPT: &str = "./worker_loader.js";
/// The heavy workers' script where the browser has relaxed SIMD: the `worker_fma` binary, the
/// same worker with its matrix product in fused multiply-adds.
pub const WORKER_FMA_SCRIPT: &str = "./worker_fma_loader.js";
/// The smallest module with a relaxed SIMD instruction: `(func (param v128 v128 v128) (result
/// v128) local.get 0 local.get 1 local.get 2 f32x4.relaxed_madd)`. `www/sw.js` holds the same
/// bytes, to keep the binary the page will start for offline use.
const RELAXED_SIMD_PROBE: [u8; 37] = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // the header
    0x01, 0x08, 0x01, 0x60, 0x03, 0x7b, 0x7b, 0x7b, 0x01, 0x7b, // the type (v128³ → v128)
    0x03, 0x02, 0x01, 0x00, // one function of that type
    0x0a, 0x0d, 0x01, 0x0b, 0x00, // its body: 11 bytes, no locals
    0x20, 0x00, 0x20, 0x01, 0x20, 0x02, // local.get 0, 1, 2
    0xfd, 0x85, 0x02, 0x0b, // f32x4.relaxed_madd, end
];

/// The drawing worker's script, beside the page: a module that runs the page's own binary,
/// which holds the model on the CPU (`www/drawer.js`, stamped by the build).
pub const DRAWER_SCRIPT: &str = "./drawer.js";

/// The heavy workers' script in this browser: [`WORKER_FMA_SCRIPT`] where relaxed SIMD
/// validates, [`WORKER_SCRIPT`] elsewhere. The page and the training worker (for its helpers)
/// ask the same browser, so every worker of a run runs the same binary.
pub fn heavy_worker_script() -> &'static str {
    thread_local! {
        static HAS_RELAXED_SIMD: bool =
            js_sys::WebAssembly::validate(&js_sys::Uint8Array::from(&RELAXED_SIMD_PROBE[..]).into())
                .unwrap_or(false);
    }
    if HAS_RELAXED_SIMD.with(|has| *has) {
        WORKER_FMA_SCRIPT
    } else {
        WORKER_SCRIPT
    }
}

/// What a worker does: one started from [`DRAWER_SCRIPT`] draws on the CPU; one started from
/// [`heavy_worker_script`] does what its URL's `?role=` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerRole {
    /// Runs the page's model on the CPU (the page's own binary, from [`DRAWER_SCRIPT`]).
    Draw,
    /// Runs the page's model on WebGPU.
    Gpu,
    /// Explains drawings (relevance, logit lens) and compares the ViT with the CNN, in a
    /// worker of its own, so that its work and faults stay off the drawing's path: the heavy
    /// worker's binary, which a visitor who trains has fetched already.
    Explain,
    /// Trains.
    Train,
    /// Computes half of each CPU step for the training worker that started it.
    Helper,
}

impl WorkerRole {
    /// The role of a worker started from [`heavy_worker_script`]: a missing or unknown role
    /// trains.
    pub fn of_this_worker() -> Self {
        match super::this_worker_param("role").as_deref() {
            Some("gpu") => Self::Gpu,
            Some("explain") => Self::Explain,
            Some("helper") => Self::Helper,
            _ => Self::Train,
        }
    }

    /// The script the worker runs.
    fn script(self) -> &'static str {
        match self {
            Self::Draw => DRAWER_SCRIPT,
            Self::Gpu | Self::Explain | Self::Train | Self::Helper => heavy_worker_script(),
        }
    }

    /// As `?role=` names it.
    fn param(self) -> &'static str {
        match self {
            Self::Draw => "draw",
            Self::Gpu => "gpu",
            Self::Explain => "explain",
            Self::Train => "train",
            Self::Helper => "helper",
        }
    }

    /// As the messages about it name it. The helper's are read inside the training worker's
    /// note "The second CPU worker stopped (…)", hence "it".
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Draw => "the drawing worker",
            Self::Gpu => "the GPU worker",
            Self::Explain => "the explaining worker",
            Self::Train => "the training worker",
            Self::Helper => "it",
        }
    }
}

/// Why a worker did not start, did not take a packet, or can no longer be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LinkError {
    /// `new Worker` threw.
    #[error("{} did not start: {why}", .role.name())]
    NotStarted { role: WorkerRole, why: String },
    /// Posting a packet threw; `what` names the message ("a request", "its setup").
    #[error("{} refused {what}: {why}", .role.name())]
    Refused {
        role: WorkerRole,
        what: &'static str,
        why: String,
    },
    /// The worker's `error` event: it died (a panic, a lost device, out of memory), with the
    /// event's message where it has one.
    #[error("{} stopped{}", .role.name(), .said.as_deref().map(|said| format!(": {said}")).unwrap_or_default())]
    Stopped {
        role: WorkerRole,
        said: Option<String>,
    },
    /// The worker is of another build than the page ([`crate::protocol::BUILD`]): a new
    /// version was deployed under the open page. It is ended unused.
    #[error("{} is from another version of vitlab: reload the page to go on", .role.name())]
    Outdated { role: WorkerRole },
    #[error(transparent)]
    Unreadable(#[from] PacketError),
}

/// What a link hears from its worker: a message with the id its packet carries (of the
/// request it answers) and the bytes beside it, or trouble.
pub enum Heard<M> {
    Message(M, Option<u32>, Option<Vec<u8>>),
    Trouble(LinkError),
}

type Listener<M> = Rc<RefCell<Box<dyn FnMut(Heard<M>)>>>;

/// Packets held back until the worker says it listens, with what each is called; `None` once
/// it does.
type Held = Rc<RefCell<Option<Vec<(Packet, &'static str)>>>>;

/// A running worker that takes `To` messages; dropping it ends the worker.
pub struct Link<To> {
    role: WorkerRole,
    worker: Worker,
    held: Held,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(ErrorEvent)>,
    _to: PhantomData<fn(&To)>,
}

impl<To: Serialize + Called> Link<To> {
    /// Starts a worker in `role`, with `params` (`&name=value…`) added to its URL. `heard`
    /// gets each message but the worker's greeting (which releases the held packets), and
    /// every trouble: a held packet refused, a packet that does not read, the worker's death.
    pub fn spawn<Answer: DeserializeOwned + Greeting + 'static>(
        role: WorkerRole,
        params: &str,
        heard: impl FnMut(Heard<Answer>) + 'static,
    ) -> Result<Self, LinkError> {
        let url = format!("{}?role={}{params}", role.script(), role.param());
        let started = match role {
            // An ES module: it imports the page's own script.
            WorkerRole::Draw => {
                let options = WorkerOptions::new();
                options.set_type(WorkerType::Module);
                Worker::new_with_options(&url, &options).inspect(|worker| {
                    // The page's compiled module, the first thing the script waits for: the
                    // worker then neither fetches nor compiles the wasm. Where the browser
                    // cannot post it, anything else makes the script load it itself.
                    if worker.post_message(&wasm_bindgen::module()).is_err() {
                        let _ = worker.post_message(&JsValue::NULL);
                    }
                })
            }
            _ => Worker::new(&url),
        };
        let worker = started.map_err(|e| LinkError::NotStarted {
            role,
            why: describe(e),
        })?;
        let heard: Listener<Answer> = Rc::new(RefCell::new(Box::new(heard)));
        let held: Held = Rc::new(RefCell::new(Some(Vec::new())));
        let (listener, waiting, target) = (heard.clone(), held.clone(), worker.clone());
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let Some(packet) = Packet::read(&event) else {
                return;
            };
            let news = match packet.parse::<Answer>() {
                Ok(message) if message.greeting().is_some() => {
                    if message.greeting() != Some(crate::protocol::BUILD) {
                        // Never run: what it would answer is not what this page reads.
                        waiting.borrow_mut().take();
                        target.terminate();
                        (listener.borrow_mut())(Heard::Trouble(LinkError::Outdated { role }));
                        return;
                    }
                    let released = waiting.borrow_mut().take().unwrap_or_default();
                    for (packet, what) in released {
                        if let Err(error) = packet.send_to(&target) {
                            let why = describe(error);
                            (listener.borrow_mut())(Heard::Trouble(LinkError::Refused {
                                role,
                                what,
                                why,
                            }));
                        }
                    }
                    return;
                }
                Ok(message) => Heard::Message(message, packet.id, packet.bytes),
                Err(error) => Heard::Trouble(error.into()),
            };
            (listener.borrow_mut())(news);
        });
        let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |event: ErrorEvent| {
            event.prevent_default();
            let said = Some(event.message()).filter(|message| !message.is_empty());
            (heard.borrow_mut())(Heard::Trouble(LinkError::Stopped { role, said }));
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Ok(Self {
            role,
            worker,
            held,
            _on_message: on_message,
            _on_error: on_error,
            _to: PhantomData,
        })
    }

    /// Sends `message` with `bytes` beside it (transferred, not copied), or holds it until the
    /// worker listens. An error when posting it threw.
    pub fn send(&self, message: &To, bytes: Option<Vec<u8>>) -> Result<(), LinkError> {
        self.post(Packet::new(message, bytes), message)
    }

    /// Sends `request` as request `id`, whose answer's packet repeats it.
    pub fn send_request(
        &self,
        request: &To,
        id: u32,
        bytes: Option<Vec<u8>>,
    ) -> Result<(), LinkError> {
        self.post(Packet::new(request, bytes).with_id(Some(id)), request)
    }

    fn post(&self, packet: Packet, message: &To) -> Result<(), LinkError> {
        if let Some(held) = self.held.borrow_mut().as_mut() {
            held.push((packet, message.called()));
            return Ok(());
        }
        packet
            .send_to(&self.worker)
            .map_err(|error| LinkError::Refused {
                role: self.role,
                what: message.called(),
                why: describe(error),
            })
    }

    /// Ends the worker now; its handlers stay until the link is dropped. (The helper's client
    /// is the one that ends its worker before dropping it.)
    #[cfg(feature = "train")]
    pub fn terminate(&self) {
        self.worker.terminate();
    }
}

thread_local! {
    /// The error handler of every worker let go: its error (a script load that the ending cut
    /// off, say) is not handled, so it would go on to this thread's own error handler, and from
    /// a helper to the page as the training worker's death. One for the thread, never dropped.
    static IGNORE_ERRORS: Closure<dyn FnMut(ErrorEvent)> =
        Closure::new(|event: ErrorEvent| event.prevent_default());
}

impl<To> Drop for Link<To> {
    fn drop(&mut self) {
        // Events already queued must find no handler of ours rather than a dropped closure.
        self.worker.set_onmessage(None);
        IGNORE_ERRORS.with(|ignore| {
            self.worker
                .set_onerror(Some(ignore.as_ref().unchecked_ref()))
        });
        self.worker.terminate();
    }
}
