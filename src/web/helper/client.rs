//! The training worker's side of its helper: started for a CPU run where the machine has a
//! second core, one job at a time, and given up on (with a note to the page) the first time
//! it fails, after which the training worker computes both halves itself.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;

use futures::channel::oneshot;
use futures::future::{Either, select};
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, MessageEvent, Worker};

use super::protocol::{FromHelper, ToHelper};
use crate::model::ModelConfig;
use crate::train::{HalfDone, HalfHelper, HalfJob, HalfJobError};
use crate::web::global::{describe, now_ms, sleep_ms};
use crate::web::packet::Packet;
use crate::web::{CPU_WORKERS_PARAM, WORKER_SCRIPT, this_worker_param};

/// The first job's deadline: a half of the largest batch the page allows takes seconds on a
/// slow machine.
const FIRST_DEADLINE_MS: f64 = 60_000.0;
/// Later jobs may take this many times the previous one's round trip (but never less than
/// [`MIN_DEADLINE_MS`]) before the helper is taken as lost: a worker that closed or hung
/// answers nothing, and without a deadline the run would wait on it forever.
const SLOWER_THAN_LAST: f64 = 20.0;
const MIN_DEADLINE_MS: f64 = 5_000.0;

type Outcome = Result<HalfDone, HalfJobError>;

struct Shared {
    /// Hears once why the helper stopped helping.
    report: Box<dyn Fn(String)>,
    /// Jobs are handed over only once the helper has built the model.
    ready: Cell<bool>,
    /// The job in progress.
    waiting: RefCell<Option<oneshot::Sender<Outcome>>>,
    /// Why the helper can no longer be used, once it cannot.
    gone: RefCell<Option<String>>,
    /// The last job's round trip, in milliseconds.
    last_ms: Cell<Option<f64>>,
}

impl Shared {
    /// Fails the job in progress, and every later one, with `message`; reports it once.
    fn end(&self, message: String) {
        self.ready.set(false);
        if self.gone.borrow().is_some() {
            return;
        }
        *self.gone.borrow_mut() = Some(message.clone());
        if let Some(waiting) = self.waiting.borrow_mut().take() {
            let _ = waiting.send(Err(HalfJobError::Damaged(message.clone())));
        }
        (self.report)(message);
    }
}

/// A running helper worker; dropping it ends the worker.
pub struct HelperWorker {
    worker: Worker,
    shared: Rc<Shared>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(ErrorEvent)>,
}

impl HelperWorker {
    /// Starts a helper for `config`'s model where this machine has more than one core and
    /// the page did not ask for one worker (`?cpu-workers=1`); `None` otherwise, or when no
    /// worker can start (the training worker then computes both halves, with the same
    /// results). `report` hears once why a helper stopped helping.
    pub fn start(config: &ModelConfig, report: impl Fn(String) + 'static) -> Option<Self> {
        let scope: web_sys::WorkerGlobalScope = js_sys::global().dyn_into().ok()?;
        let one_asked = this_worker_param(CPU_WORKERS_PARAM).as_deref() == Some("1");
        if one_asked || scope.navigator().hardware_concurrency() < 2.0 {
            return None;
        }
        let worker = Worker::new(&format!("{WORKER_SCRIPT}?role=helper")).ok()?;
        let shared = Rc::new(Shared {
            report: Box::new(report),
            ready: Cell::new(false),
            waiting: RefCell::new(None),
            gone: RefCell::new(None),
            last_ms: Cell::new(None),
        });
        let setup = Packet::new(
            &ToHelper::Setup {
                config: config.clone(),
            },
            None,
        );
        let setup = RefCell::new(Some(setup));
        let (state, target) = (shared.clone(), worker.clone());
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let Some(packet) = Packet::read(&event) else {
                return;
            };
            match packet.parse::<FromHelper>() {
                Ok(FromHelper::Listening) => {
                    if let Some(setup) = setup.borrow_mut().take()
                        && let Err(error) = setup.send_to(&target)
                    {
                        state.end(format!("it refused its setup: {}", describe(error)));
                    }
                }
                Ok(FromHelper::Ready) => state.ready.set(true),
                Ok(FromHelper::Done(header)) => {
                    let outcome = HalfDone::from_parts(header, &packet.bytes.unwrap_or_default());
                    if let Some(waiting) = state.waiting.borrow_mut().take() {
                        let _ = waiting.send(outcome);
                    }
                }
                Ok(FromHelper::Failed { message }) | Err(message) => state.end(message),
            }
        });
        let state = shared.clone();
        let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |event: ErrorEvent| {
            event.prevent_default();
            let message = event.message();
            state.end(if message.is_empty() {
                "it stopped".to_string()
            } else {
                format!("it stopped: {message}")
            });
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Some(Self {
            worker,
            shared,
            _on_message: on_message,
            _on_error: on_error,
        })
    }

    /// Waits until the helper takes jobs, at most `deadline_ms`; whether it does.
    pub async fn ready_within(&self, deadline_ms: f64) -> bool {
        let until = now_ms() + deadline_ms;
        while !self.is_ready() && self.shared.gone.borrow().is_none() && now_ms() < until {
            sleep_ms(20).await;
        }
        self.is_ready()
    }
}

impl HalfHelper for HelperWorker {
    fn is_ready(&self) -> bool {
        self.shared.ready.get() && self.shared.waiting.borrow().is_none()
    }

    fn hand_over(&self, job: HalfJob) -> impl Future<Output = Outcome> {
        let (header, bytes) = job.into_parts();
        let (answer, waiting) = oneshot::channel();
        *self.shared.waiting.borrow_mut() = Some(answer);
        if let Err(error) = Packet::new(&ToHelper::Job(header), Some(bytes)).send_to(&self.worker) {
            let message = format!("it refused a job: {}", describe(error));
            self.shared.end(message);
        }
        let deadline_ms = self.shared.last_ms.get().map_or(FIRST_DEADLINE_MS, |last| {
            (last * SLOWER_THAN_LAST).clamp(MIN_DEADLINE_MS, FIRST_DEADLINE_MS)
        });
        let (shared, began) = (self.shared.clone(), now_ms());
        async move {
            match select(waiting, Box::pin(sleep_ms(deadline_ms as u32))).await {
                Either::Left((Ok(outcome), _)) => {
                    shared.last_ms.set(Some(now_ms() - began));
                    outcome
                }
                Either::Left((Err(_), _)) => Err(HalfJobError::Damaged("it went away".into())),
                Either::Right(_) => Err(HalfJobError::Damaged(format!(
                    "no answer within {:.0} s",
                    deadline_ms / 1000.0
                ))),
            }
        }
    }

    fn give_up(&self, error: HalfJobError) {
        self.worker.terminate();
        self.shared.end(error.to_string());
    }
}

impl Drop for HelperWorker {
    fn drop(&mut self) {
        // Events already queued must find no handler rather than a dropped closure.
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.terminate();
    }
}
