//! The model the lab draws with and where it runs: in the light drawing worker on the CPU, or
//! in the GPU worker on WebGPU, with the CPU copy kept to take over the moment the GPU fails.
//! Both are workers: the page's own thread only paints.

use std::rc::Rc;

use leptos::prelude::*;

use crate::data::IMAGE_PIXELS;
use crate::example_digit::{PAD_SIDE, example_image};
use crate::model::HeadsOff;
use crate::protocol::BackendKind;
use crate::web::{self, DrawingError, DrawingWorker, Engine, KeptWorker, LinkError};

/// The engine everything reads, swapped when the model or the backend changes.
pub type EngineSignal = RwSignal<Option<Rc<Engine>>, LocalStorage>;

/// The model on the CPU, kept beside the one in use (which may be on WebGPU).
pub type CpuEngine = StoredValue<Option<Rc<Engine>>, LocalStorage>;

/// The bytes of the weights in use, once a model is.
pub type WeightsBytes = StoredValue<Option<Rc<Vec<u8>>>, LocalStorage>;

/// Why weights were not installed, or why failed work has nowhere left to run. Each says
/// what the browser layer said, as the page shows it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostError {
    /// A drawing worker could not be started.
    #[error(transparent)]
    Start(#[from] LinkError),
    /// The bytes are not weights this page can build a model from, or the CPU's worker failed
    /// to build one.
    #[error(transparent)]
    Load(DrawingError),
    /// The GPU worker could not be given the weights.
    #[error(transparent)]
    Gpu(DrawingError),
    /// Work failed on the CPU, or on a GPU with no CPU copy kept: there is nowhere to move it.
    #[error(transparent)]
    NowhereToGo(DrawingError),
}

/// Classifications timed per backend when the page picks the faster one.
const TIMED_RUNS: usize = 5;

/// The page's model, where it runs, and what the page says about that.
/// Why the model runs on the CPU where WebGPU was asked for or tried, typed until the
/// header says it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BackendNote {
    #[error("On the CPU: {}", web::NO_WEBGPU)]
    NoWebGpu,
    #[error("On the CPU: {}", web::NO_ADAPTER)]
    NoAdapter,
    /// WebGPU's worker or its warm-up failed.
    #[error("On the CPU: WebGPU failed ({0})")]
    GpuFailed(HostError),
    /// The GPU failed under a drawing or the test batch: the CPU's copy took over.
    #[error("Switched to the CPU: the GPU failed ({0})")]
    GpuLost(DrawingError),
}

/// What timing WebGPU against the CPU found, as the header shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum Timings {
    /// Under way.
    Timing,
    /// The GPU's model could not be made: the CPU stays.
    Unavailable(HostError),
    /// The GPU failed while it was timed: the CPU stays.
    FailedDuring(HostError),
    /// The median time per drawing on each, and the one kept.
    Measured {
        gpu_ms: f64,
        cpu_ms: f64,
        faster: BackendKind,
    },
}

impl std::fmt::Display for Timings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Timing => write!(f, "timing WebGPU against the CPU…"),
            Self::Unavailable(why) => write!(f, "CPU: WebGPU unavailable ({why})"),
            Self::FailedDuring(why) => write!(f, "CPU: WebGPU failed during the timing ({why})"),
            Self::Measured {
                gpu_ms,
                cpu_ms,
                faster,
            } => write!(
                f,
                "per drawing: WebGPU {gpu_ms:.1} ms, CPU {cpu_ms:.1} ms → {}",
                faster.label()
            ),
        }
    }
}

#[derive(Clone, Copy)]
pub struct ModelHost {
    /// What the lab classifies with.
    pub engine: EngineSignal,
    /// Bumped when other weights are installed (the lab is rebuilt for their grid and depth),
    /// not when the same weights move to another backend.
    pub generation: RwSignal<u32>,
    /// Why the backend is not the one asked for or chosen, if it is not.
    pub note: RwSignal<Option<BackendNote>>,
    /// What timing WebGPU against the CPU found, once the page has timed them.
    pub timings: RwSignal<Option<Timings>>,
    /// The same weights on the CPU: heads switched off and a person's set are read there (the
    /// GPU's worker binary is held to 3 MB, and this model reads one drawing in milliseconds).
    pub cpu: CpuEngine,
    /// The drawing workers, kept across models: a new model is loaded into the same one.
    cpu_worker: StoredValue<KeptWorker<DrawingWorker>, LocalStorage>,
    gpu_worker: StoredValue<KeptWorker<DrawingWorker>, LocalStorage>,
    /// The weights in use, for work that builds a model of its own (the explanations).
    pub weights: WeightsBytes,
}

impl Default for ModelHost {
    fn default() -> Self {
        Self::new()
    }
}

impl ModelHost {
    pub fn new() -> Self {
        Self {
            engine: RwSignal::new_local(None),
            generation: RwSignal::new(0),
            note: RwSignal::new(None),
            timings: RwSignal::new(None),
            cpu: StoredValue::new_local(None),
            cpu_worker: StoredValue::new_local(KeptWorker::default()),
            gpu_worker: StoredValue::new_local(KeptWorker::default()),
            weights: StoredValue::new_local(None),
        }
    }

    /// The backend in use, if a model is.
    pub fn backend(&self) -> Option<BackendKind> {
        self.engine
            .with_untracked(|engine| engine.as_ref().map(|e| e.backend))
    }

    /// Starts the CPU's drawing worker, if there is none, so that its code loads while the
    /// weights do.
    pub fn start_cpu_worker(&self) -> Result<Rc<DrawingWorker>, HostError> {
        worker_in(self.cpu_worker, BackendKind::Cpu)
    }

    /// Has the CPU's worker check `bytes`, build and warm the model (and, with `backend`
    /// WebGPU, the GPU worker too; the CPU when WebGPU fails, saying why), and only then swaps
    /// it in: on an error the model in use stays.
    pub async fn install(&self, bytes: &[u8], backend: BackendKind) -> Result<(), HostError> {
        let worker = self.start_cpu_worker()?;
        // A worker that died here is started afresh for the next weights (`worker_in`).
        let cpu = Engine::load(bytes, worker, BackendKind::Cpu)
            .await
            .map(Rc::new)
            .map_err(HostError::Load)?;
        let chosen = match backend {
            BackendKind::Cpu => cpu.clone(),
            // No worker (3 MB) fetched to learn what `navigator.gpu` says.
            BackendKind::WebGpu if !web::has_webgpu() => {
                self.note.set(Some(BackendNote::NoWebGpu));
                cpu.clone()
            }
            BackendKind::WebGpu => match self.gpu_engine(bytes).await {
                Ok(gpu) => Rc::new(gpu),
                Err(why) => {
                    self.close_gpu();
                    self.note.set(Some(BackendNote::GpuFailed(why)));
                    cpu.clone()
                }
            },
        };
        self.cpu.set_value(Some(cpu));
        self.weights.set_value(Some(Rc::new(bytes.to_vec())));
        self.engine.set(Some(chosen));
        self.generation.update(|g| *g += 1);
        Ok(())
    }

    /// The same weights in the GPU worker (started if there is none), built and warm.
    async fn gpu_engine(&self, bytes: &[u8]) -> Result<Engine, HostError> {
        let worker = worker_in(self.gpu_worker, BackendKind::WebGpu)?;
        Engine::load(bytes, worker, BackendKind::WebGpu)
            .await
            .map_err(HostError::Gpu)
    }

    fn close_gpu(&self) {
        // Dropping the last handle ends the worker, and the GPU memory with it.
        self.gpu_worker.with_value(KeptWorker::forget);
    }

    /// Work on the model failed on `failed_on` (a drawing, the test batch): a GPU failure hands
    /// the model to the CPU copy, and the label says why; a CPU failure has nowhere to go. `Ok`
    /// means the work can be tried again where the model now runs. The drawing and the test
    /// batch may both meet the same lost device: the second finds the CPU already in charge.
    pub fn fail_over(&self, failed_on: BackendKind, error: DrawingError) -> Result<(), HostError> {
        if failed_on != BackendKind::WebGpu {
            return Err(HostError::NowhereToGo(error));
        }
        if self.backend() != Some(BackendKind::WebGpu) {
            return Ok(());
        }
        self.close_gpu();
        self.note.set(Some(BackendNote::GpuLost(error.clone())));
        match self.cpu.get_value() {
            Some(cpu) => {
                self.engine.set(Some(cpu));
                Ok(())
            }
            None => Err(HostError::NowhereToGo(error)),
        }
    }

    /// Times a test digit on the CPU model in use and on WebGPU, keeps the faster and shows
    /// both figures. Any failure of the GPU leaves the CPU in use, with the reason. WebGPU that
    /// offers no adapter is said without fetching the GPU worker.
    pub async fn choose_faster(&self, bytes: &[u8]) {
        let generation = self.generation.get_untracked();
        let Some(cpu) = self.cpu.get_value() else {
            return;
        };
        if !web::adapter_available().await {
            self.note.set(Some(BackendNote::NoAdapter));
            return;
        }
        self.timings.set(Some(Timings::Timing));
        // A drawing, so the GPU does the work a drawing gives it: the example the page opens
        // on, which costs no download (a test digit fetched the 394 kB test chunk for it).
        let probe = example_image(PAD_SIDE as usize);
        let gpu = match self.gpu_engine(bytes).await {
            Ok(gpu) => Rc::new(gpu),
            Err(why) => {
                self.close_gpu();
                self.timings.set(Some(Timings::Unavailable(why)));
                return;
            }
        };
        let (cpu_ms, gpu_ms) = match (median_ms(&cpu, &probe).await, median_ms(&gpu, &probe).await)
        {
            (Ok(cpu_ms), Ok(gpu_ms)) => (cpu_ms, gpu_ms),
            (Err(why), _) | (_, Err(why)) => {
                self.close_gpu();
                self.timings.set(Some(Timings::FailedDuring(why)));
                return;
            }
        };
        if self.generation.get_untracked() != generation || self.backend() != Some(BackendKind::Cpu)
        {
            // Other weights or a failure came in meanwhile: what was timed no longer applies.
            self.close_gpu();
            return;
        }
        let faster = if gpu_ms < cpu_ms {
            self.engine.set(Some(gpu));
            BackendKind::WebGpu
        } else {
            self.close_gpu();
            BackendKind::Cpu
        };
        self.timings.set(Some(Timings::Measured {
            gpu_ms,
            cpu_ms,
            faster,
        }));
    }
}

/// The healthy worker kept in `slot` for `backend`, or a new one started there.
fn worker_in(
    slot: StoredValue<KeptWorker<DrawingWorker>, LocalStorage>,
    backend: BackendKind,
) -> Result<Rc<DrawingWorker>, HostError> {
    slot.with_value(|kept| kept.get_or_start(|| DrawingWorker::spawn(backend)))
        .map_err(HostError::from)
}

/// Median time of [`TIMED_RUNS`] classifications of `probe`, in milliseconds.
async fn median_ms(engine: &Engine, probe: &[u8; IMAGE_PIXELS]) -> Result<f64, HostError> {
    let mut times = Vec::with_capacity(TIMED_RUNS);
    for _ in 0..TIMED_RUNS {
        let started = web::now_ms();
        engine
            .classify(probe, HeadsOff::default())
            .await
            .map_err(HostError::Gpu)?;
        times.push(web::now_ms() - started);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[TIMED_RUNS / 2])
}

/// Whether the browser offers WebGPU at all.
pub fn browser_has_webgpu() -> bool {
    web::has_webgpu()
}
