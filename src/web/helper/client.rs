//! The training worker's side of its helpers: as many as [`CpuWorkers`] says for a CPU run
//! (one per core but the training worker's), each one job at a time, and each given up on
//! (with a note to the page) the first time it fails, after which the training worker computes
//! its shards itself.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;

use futures::channel::oneshot;
use wasm_bindgen::JsCast;

use crate::model::ModelConfig;
use crate::protocol::{FromHelper, ToHelper};
use crate::train::{CpuWorkers, ShardHelper, ShardJob, ShardJobError, ShardsDone};
use crate::web::global::{now_ms, sleep_ms, within_ms};
use crate::web::link::{Heard, Link, LinkError, WorkerRole};
use crate::web::{CPU_WORKERS_PARAM, this_worker_param};

/// The first job's deadline: a half of the largest batch the page allows takes seconds on a
/// slow machine.
const FIRST_DEADLINE_MS: f64 = 60_000.0;
/// Later jobs may take this many times the previous one's round trip (but never less than
/// [`MIN_DEADLINE_MS`]) before the helper is taken as lost: a worker that closed or hung
/// answers nothing, and without a deadline the run would wait on it forever.
const SLOWER_THAN_LAST: f64 = 20.0;
const MIN_DEADLINE_MS: f64 = 5_000.0;

type Outcome = Result<ShardsDone, ShardJobError>;

/// Why a helper stopped helping, said inside "A helper CPU worker stopped (…)".
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HelperError {
    /// It refused its setup or a job, sent what does not read, or died.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// Its own words for why the setup or a job failed.
    #[error("{0}")]
    Failed(String),
    #[error("it went away")]
    Gone,
    #[error("no answer within {seconds:.0} s")]
    Late { seconds: f64 },
    /// Its outcome could not be used.
    #[error(transparent)]
    GivenUp(ShardJobError),
}

struct Shared {
    /// Hears once why the helper stopped helping.
    report: Box<dyn Fn(HelperError)>,
    /// Jobs are handed over only once the helper has built the model.
    ready: Cell<bool>,
    /// The job in progress.
    waiting: RefCell<Option<oneshot::Sender<Outcome>>>,
    /// Why the helper can no longer be used, once it cannot.
    gone: RefCell<Option<HelperError>>,
    /// The last job's round trip, in milliseconds.
    last_ms: Cell<Option<f64>>,
}

impl Shared {
    /// Fails the job in progress, and every later one, with `error`; reports it once.
    fn end(&self, error: HelperError) {
        self.ready.set(false);
        if self.gone.borrow().is_some() {
            return;
        }
        *self.gone.borrow_mut() = Some(error.clone());
        if let Some(waiting) = self.waiting.borrow_mut().take() {
            let _ = waiting.send(Err(ShardJobError::Damaged(error.to_string())));
        }
        (self.report)(error);
    }

    fn hear(&self, heard: Heard<FromHelper>) {
        match heard {
            Heard::Message(FromHelper::Built, _, _) => self.ready.set(true),
            Heard::Message(FromHelper::Done(header), _, bytes) => {
                let outcome = ShardsDone::from_parts(header, &bytes.unwrap_or_default())
                    .map_err(ShardJobError::from);
                if let Some(waiting) = self.waiting.borrow_mut().take() {
                    let _ = waiting.send(outcome);
                }
            }
            Heard::Message(FromHelper::Failed { message }, _, _) => {
                self.end(HelperError::Failed(message))
            }
            // The link keeps the greeting to itself.
            Heard::Message(FromHelper::Listening { .. }, _, _) => {}
            Heard::Trouble(error) => self.end(error.into()),
        }
    }
}

/// A running helper worker; dropping it ends the worker.
pub struct HelperWorker {
    link: Link<ToHelper>,
    shared: Rc<Shared>,
}

impl HelperWorker {
    /// Starts `count` helpers for `config`'s model; fewer where a worker cannot start (the
    /// training worker then computes their shards, with the same results). `report` hears
    /// once for each why it stopped helping.
    pub fn start_many(
        config: &ModelConfig,
        count: usize,
        report: impl Fn(HelperError) + Clone + 'static,
    ) -> Vec<Self> {
        (0..count)
            .map_while(|_| Self::start(config, report.clone()))
            .collect()
    }

    /// Starts a helper for `config`'s model; `None` when no worker can start. `report` hears
    /// once why it stopped helping.
    fn start(config: &ModelConfig, report: impl Fn(HelperError) + 'static) -> Option<Self> {
        let shared = Rc::new(Shared {
            report: Box::new(report),
            ready: Cell::new(false),
            waiting: RefCell::new(None),
            gone: RefCell::new(None),
            last_ms: Cell::new(None),
        });
        let state = shared.clone();
        let link = Link::spawn(WorkerRole::Helper, "", move |heard| state.hear(heard)).ok()?;
        // Held by the link until the helper listens.
        let setup = ToHelper::Setup {
            config: config.clone(),
        };
        if let Err(error) = link.send(&setup, None) {
            shared.end(error.into());
        }
        Some(Self { link, shared })
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

impl ShardHelper for HelperWorker {
    fn is_ready(&self) -> bool {
        self.shared.ready.get() && self.shared.waiting.borrow().is_none()
    }

    fn hand_over(&self, job: ShardJob) -> impl Future<Output = Outcome> {
        let (header, bytes) = job.into_parts();
        let (answer, waiting) = oneshot::channel();
        *self.shared.waiting.borrow_mut() = Some(answer);
        if let Err(error) = self.link.send(&ToHelper::Job(header), Some(bytes)) {
            self.shared.end(error.into());
        }
        let deadline_ms = self.shared.last_ms.get().map_or(FIRST_DEADLINE_MS, |last| {
            (last * SLOWER_THAN_LAST).clamp(MIN_DEADLINE_MS, FIRST_DEADLINE_MS)
        });
        let (shared, began) = (self.shared.clone(), now_ms());
        async move {
            match within_ms(deadline_ms as u32, waiting).await {
                Some(Ok(outcome)) => {
                    shared.last_ms.set(Some(now_ms() - began));
                    outcome
                }
                Some(Err(_)) => Err(ShardJobError::Damaged(HelperError::Gone.to_string())),
                None => Err(ShardJobError::Damaged(
                    HelperError::Late {
                        seconds: deadline_ms / 1000.0,
                    }
                    .to_string(),
                )),
            }
        }
    }

    fn give_up(&self, error: ShardJobError) {
        self.link.terminate();
        self.shared.end(HelperError::GivenUp(error));
    }
}

/// What this worker's browser says of the machine (its cores and, where it says, its memory),
/// and the `?cpu-workers=N` the page passed on, where it is one.
pub fn cpu_workers_here() -> CpuWorkers {
    let navigator = js_sys::global()
        .dyn_into::<web_sys::WorkerGlobalScope>()
        .ok()
        .map(|scope| scope.navigator());
    let cores = navigator
        .as_ref()
        .map_or(1.0, |navigator| navigator.hardware_concurrency());
    // Not in web-sys's WorkerNavigator: Chromium has it, Firefox and WebKit do not.
    let memory_gib = navigator
        .and_then(|navigator| js_sys::Reflect::get(&navigator, &"deviceMemory".into()).ok())
        .and_then(|memory| memory.as_f64());
    CpuWorkers {
        cores: if cores.is_finite() && cores >= 1.0 {
            cores as usize
        } else {
            1
        },
        memory_gib,
        asked: this_worker_param(CPU_WORKERS_PARAM).and_then(|text| CpuWorkers::parse(&text).ok()),
    }
}
