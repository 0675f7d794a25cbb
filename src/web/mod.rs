//! The browser boundary: device start-up, fetching and caching, the URL, the model engine,
//! and the workers. Each worker is a folder (`drawing`, `explain`, `helper`, `trainer`) with
//! its `client` (the side that starts it, on top of `link`, and of `asker` for those that
//! answer requests) and its `worker` (inside it); `packet` is how they talk and
//! `crate::protocol` what they say.

use wasm_bindgen::JsCast;

pub mod address;
mod asker;
pub mod before_after;
mod cache;
mod chunks;
mod databases;
mod device;
#[cfg(feature = "train")]
mod device_trial;
mod download;
pub mod drawing;
mod engine;
pub mod explain;
mod fetch;
mod global;
mod gpu_errors;
#[cfg(all(feature = "train", feature = "gpu"))]
mod heavy_worker;
#[cfg(feature = "train")]
pub mod helper;
mod idle;
mod kept_worker;
mod link;
mod local_model;
mod offline;
mod packet;
mod page_runs;
pub mod personal_db;
mod read;
mod run_db;
mod run_lock;
mod run_migration;
mod tab_run;
mod test_digits;
mod trainer;

pub use asker::AskError;
pub use cache::{ByteCache, StorageError, delete_cache};
pub use chunks::{CHUNK_CACHE, ChunkSource, DATA_BASE, LoadedChunk, ManifestError, Network};
pub use databases::DatabaseNotice;
pub use device::{
    NO_ADAPTER, NO_WEBGPU, StartedDevice, adapter_available, has_webgpu, start_device,
    start_exactly,
};
pub use download::{DownloadError, offer_download, offer_png};
pub use drawing::{DrawingError, DrawingWorker, run_drawing_worker};
pub use engine::Engine;
#[cfg(feature = "gpu")]
pub use explain::run_explaining_worker;
pub use fetch::{FetchError, MAX_FETCH_BYTES, fetch_bytes, fetch_weights, within};
#[cfg(feature = "train")]
pub use global::yield_to_messages;
pub use global::{describe, next_task, now_ms, report_rejections_as_errors, sleep_ms, within_ms};
pub use gpu_errors::{GpuRejected, gpu_checked};
#[cfg(all(feature = "train", feature = "gpu"))]
pub use heavy_worker::run_heavy_worker;
#[cfg(feature = "train")]
pub use helper::run_helper_worker;
pub use idle::{after_next_paint, on_page_hidden, when_idle, when_key_pressed, when_visible};
pub use kept_worker::{Failing, KeptWorker};
pub use link::{DRAWER_SCRIPT, LinkError, WorkerRole};
pub use local_model::{LocalModel, ModelError};
pub use offline::{OfflineError, keep_for_offline};
pub use page_runs::PageRuns;
pub use read::{ReadError, read_floats_async, read_ints_async};
pub use run_db::{RunDb, ask_to_persist, storage_estimate};
pub use run_lock::{RunHold, WebLocks};
pub use run_migration::move_old_runs;
pub use tab_run::{SessionTab, draw_run_id};
pub use test_digits::{TestDigits, TestDigitsError};
#[cfg(feature = "train")]
pub use trainer::run_training_worker;
pub use trainer::{TrainerLost, TrainerWorker};

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

/// The page's query parameter by which a person (or a test) asks for CPU training in N
/// workers (`?cpu-workers=N`, 1 to 8; `1`: the training worker alone, without helpers). The
/// page passes it on to the training worker.
pub const CPU_WORKERS_PARAM: &str = "cpu-workers";

/// A query parameter of this worker's own URL (inside a worker; `None` elsewhere).
pub fn this_worker_param(name: &str) -> Option<String> {
    let scope = js_sys::global()
        .dyn_into::<web_sys::WorkerGlobalScope>()
        .ok()?;
    param_of(&scope.location().search(), name)
}
