//! The browser boundary: device start-up, fetching and caching, the URL, the model engine,
//! the training worker and the page's handle on it.

use wasm_bindgen::JsCast;

mod cache;
mod chunks;
mod device;
#[cfg(feature = "train")]
mod device_trial;
mod engine;
mod fetch;
mod global;
pub mod gpu;
#[cfg(feature = "train")]
pub mod helper;
mod packet;
mod read;
mod run_log;
pub mod saved_run;
#[cfg(feature = "train")]
mod trainer;
mod trainer_client;

pub use cache::{ByteCache, delete_cache};
pub use chunks::{CHUNK_CACHE, ChunkSource, DATA_BASE, LoadedChunk, Network};
pub use device::{Backend, StartedDevice, start_device};
pub use engine::{Engine, FILTER_COMPONENTS, LocalModel};
pub use fetch::{MAX_FETCH_BYTES, fetch_bytes, within};
pub use global::{describe, now_ms, report_rejections_as_errors, sleep_ms};
#[cfg(feature = "gpu")]
pub use gpu::run_gpu_worker;
#[cfg(feature = "train")]
pub use helper::run_helper_worker;
pub use read::{read_floats, read_ints};
pub use run_log::RunLog;
#[cfg(feature = "train")]
pub use trainer::run_training_worker;
pub use trainer_client::{TrainerWorker, WORKER_SCRIPT};

/// The page's query string, with its `?` (empty when there is none).
pub fn query() -> String {
    web_sys::window()
        .and_then(|window| window.location().search().ok())
        .unwrap_or_default()
}

/// A query parameter of the page's URL, e.g. `backend` in `?backend=cpu`.
pub fn query_param(name: &str) -> Option<String> {
    param_of(&web_sys::window()?.location().search().ok()?, name)
}

/// Parameter `name` of the query string `search`.
fn param_of(search: &str, name: &str) -> Option<String> {
    web_sys::UrlSearchParams::new_with_str(search)
        .ok()?
        .get(name)
}

/// The page's query parameter by which a person (or a test) asks for CPU training in one
/// worker, without the helper: `?cpu-workers=1`. The page passes it on to the training worker.
pub const CPU_WORKERS_PARAM: &str = "cpu-workers";

/// A query parameter of this worker's own URL (inside a worker; `None` elsewhere).
pub fn this_worker_param(name: &str) -> Option<String> {
    let scope = js_sys::global()
        .dyn_into::<web_sys::WorkerGlobalScope>()
        .ok()?;
    param_of(&scope.location().search(), name)
}

/// What a worker started from [`WORKER_SCRIPT`] does, from its URL's `?role=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerRole {
    /// Runs the page's model on WebGPU.
    Gpu,
    /// Trains.
    Train,
    /// Computes half of each CPU step for the training worker that started it.
    Helper,
}

impl WorkerRole {
    pub fn of_this_worker() -> Self {
        match this_worker_param("role").as_deref() {
            Some("gpu") => Self::Gpu,
            Some("helper") => Self::Helper,
            _ => Self::Train,
        }
    }
}
