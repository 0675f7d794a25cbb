//! The training worker's helpers: workers that each compute some of the shards of a CPU step
//! while the training worker computes its own (`train/shards.rs` says why shards), so a run
//! uses every core without shared memory, threads in wasm or special headers.

mod client;
mod worker;

pub use client::{HelperError, HelperWorker, cpu_workers_here};
pub use worker::run_helper_worker;
