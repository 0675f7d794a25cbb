//! The model the lab draws with and where it runs: on the CPU in the page, or on WebGPU in the
//! GPU worker, with the CPU copy kept to take over the moment the GPU fails.

use std::rc::Rc;

use leptos::prelude::*;

use crate::data::IMAGE_PIXELS;
use crate::web::gpu::GpuWorker;
use crate::web::{self, BackendKind, Engine, EngineError, LinkError};

/// The engine everything reads, swapped when the model or the backend changes.
pub type EngineSignal = RwSignal<Option<Rc<Engine>>, LocalStorage>;

/// The bytes of the weights in use, once a model is.
pub type WeightsBytes = StoredValue<Option<Rc<Vec<u8>>>, LocalStorage>;

/// Why weights were not installed, or why failed work has nowhere left to run. Each says
/// what the browser layer said, as the page shows it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostError {
    /// The bytes are not weights this page can build a model from.
    #[error(transparent)]
    Load(EngineError),
    /// The model was built but failed to classify.
    #[error(transparent)]
    Classify(EngineError),
    /// The GPU worker could not be started.
    #[error(transparent)]
    GpuStart(#[from] LinkError),
    /// The GPU worker could not be given the weights.
    #[error(transparent)]
    Gpu(EngineError),
    /// Work failed on the CPU, or on a GPU with no CPU copy kept: there is nowhere to move it.
    #[error(transparent)]
    NowhereToGo(EngineError),
}

/// Classifications timed per backend when the page picks the faster one.
const TIMED_RUNS: usize = 5;

/// The page's model, where it runs, and what the page says about that.
#[derive(Clone, Copy)]
pub struct ModelHost {
    /// What the lab classifies with.
    pub engine: EngineSignal,
    /// Bumped when other weights are installed (the lab is rebuilt for their grid and depth),
    /// not when the same weights move to another backend.
    pub generation: RwSignal<u32>,
    /// Why the backend is not the one asked for or chosen, if it is not.
    pub note: RwSignal<Option<String>>,
    /// Both backends' time per drawing, once the page has measured them.
    pub timings: RwSignal<Option<String>>,
    /// The same weights on the CPU.
    cpu: StoredValue<Option<Rc<Engine>>, LocalStorage>,
    gpu: StoredValue<Option<Rc<GpuWorker>>, LocalStorage>,
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
            gpu: StoredValue::new_local(None),
            weights: StoredValue::new_local(None),
        }
    }

    /// The backend in use, if a model is.
    pub fn backend(&self) -> Option<BackendKind> {
        self.engine
            .with_untracked(|engine| engine.as_ref().map(|e| e.backend))
    }

    /// Checks `bytes`, builds and warms the model on `backend` (the CPU when WebGPU fails,
    /// saying why), and only then swaps it in: on an error the model in use stays.
    pub async fn install(&self, bytes: &[u8], backend: BackendKind) -> Result<(), HostError> {
        let cpu = Rc::new(
            warm(
                Engine::load(bytes, burn::tensor::Device::flex(), BackendKind::Cpu)
                    .map_err(HostError::Load)?,
            )
            .await?,
        );
        let chosen = match backend {
            BackendKind::Cpu => cpu.clone(),
            // No worker (3 MB) fetched to learn what `navigator.gpu` says.
            BackendKind::WebGpu if !web::has_webgpu() => {
                self.note
                    .set(Some(format!("On the CPU: {}", web::NO_WEBGPU)));
                cpu.clone()
            }
            BackendKind::WebGpu => match self.gpu_engine(bytes).await {
                Ok(gpu) => Rc::new(gpu),
                Err(message) => {
                    self.close_gpu();
                    self.note
                        .set(Some(format!("On the CPU: WebGPU failed ({message})")));
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
        let worker = match self.gpu.get_value().filter(|w| w.failure().is_none()) {
            Some(worker) => worker,
            None => {
                let worker = GpuWorker::spawn()?;
                self.gpu.set_value(Some(worker.clone()));
                worker
            }
        };
        Engine::load_on_gpu(bytes, worker)
            .await
            .map_err(HostError::Gpu)
    }

    fn close_gpu(&self) {
        // Dropping the last handle ends the worker, and the GPU memory with it.
        self.gpu.set_value(None);
    }

    /// Work on the model failed on `failed_on` (a drawing, the test batch): a GPU failure hands
    /// the model to the CPU copy, and the label says why; a CPU failure has nowhere to go. `Ok`
    /// means the work can be tried again where the model now runs. The drawing and the test
    /// batch may both meet the same lost device: the second finds the CPU already in charge.
    pub fn fail_over(&self, failed_on: BackendKind, error: EngineError) -> Result<(), HostError> {
        if failed_on != BackendKind::WebGpu {
            return Err(HostError::NowhereToGo(error));
        }
        if self.backend() != Some(BackendKind::WebGpu) {
            return Ok(());
        }
        self.close_gpu();
        self.note.set(Some(format!(
            "Switched to the CPU: the GPU failed ({error})"
        )));
        match self.cpu.get_value() {
            Some(cpu) => {
                self.engine.set(Some(cpu));
                Ok(())
            }
            None => Err(HostError::NowhereToGo(error)),
        }
    }

    /// Times `probe` on the CPU model in use and on WebGPU, keeps the faster and shows both
    /// figures. Any failure of the GPU leaves the CPU in use, with the reason.
    pub async fn choose_faster(&self, bytes: &[u8], probe: &[u8; IMAGE_PIXELS]) {
        let generation = self.generation.get_untracked();
        let Some(cpu) = self.cpu.get_value() else {
            return;
        };
        self.timings
            .set(Some("timing WebGPU against the CPU…".into()));
        let gpu = match self.gpu_engine(bytes).await {
            Ok(gpu) => Rc::new(gpu),
            Err(message) => {
                self.close_gpu();
                self.timings
                    .set(Some(format!("CPU: WebGPU unavailable ({message})")));
                return;
            }
        };
        let (cpu_ms, gpu_ms) = match (median_ms(&cpu, probe).await, median_ms(&gpu, probe).await) {
            (Ok(cpu_ms), Ok(gpu_ms)) => (cpu_ms, gpu_ms),
            (Err(message), _) | (_, Err(message)) => {
                self.close_gpu();
                self.timings.set(Some(format!(
                    "CPU: WebGPU failed during the timing ({message})"
                )));
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
        self.timings.set(Some(format!(
            "per drawing: WebGPU {gpu_ms:.1} ms, CPU {cpu_ms:.1} ms → {}",
            faster.label()
        )));
    }
}

/// The first pass compiles the GPU kernels; done before the first stroke.
async fn warm(engine: Engine) -> Result<Engine, HostError> {
    engine
        .classify(&[0u8; IMAGE_PIXELS])
        .await
        .map_err(HostError::Classify)?;
    Ok(engine)
}

/// Median time of [`TIMED_RUNS`] classifications of `probe`, in milliseconds.
async fn median_ms(engine: &Engine, probe: &[u8; IMAGE_PIXELS]) -> Result<f64, HostError> {
    let mut times = Vec::with_capacity(TIMED_RUNS);
    for _ in 0..TIMED_RUNS {
        let started = web::now_ms();
        engine.classify(probe).await.map_err(HostError::Classify)?;
        times.push(web::now_ms() - started);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[TIMED_RUNS / 2])
}

/// Whether the browser offers WebGPU at all.
pub fn browser_has_webgpu() -> bool {
    web::has_webgpu()
}
