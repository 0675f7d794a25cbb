//! The browser boundary: device start-up, fetching and caching, the URL, the model engine,
//! the training worker and the page's handle on it.

mod cache;
mod chunks;
mod device;
mod engine;
mod fetch;
mod global;
mod read;
pub mod saved_run;
mod trainer_client;
mod training_worker;

pub use cache::{ByteCache, delete_cache};
pub use chunks::{CHUNK_CACHE, ChunkSource, DATA_BASE, LoadedChunk, Network};
pub use device::{Backend, StartedDevice, start_device};
pub use engine::{Engine, FILTER_COMPONENTS};
pub use fetch::fetch_bytes;
pub use global::{describe, now_ms, sleep_ms};
pub use read::{read_floats, read_ints};
pub use trainer_client::{TRAINER_SCRIPT, TrainerWorker};
pub use training_worker::run_training_worker;

/// A query parameter of the page's URL, e.g. `backend` in `?backend=cpu`.
pub fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search)
        .ok()?
        .get(name)
}
