//! The training worker's helper: a second worker that computes the second half of each CPU
//! step while the training worker computes the first (`train/shards.rs` says why halves), so
//! a run uses two cores without shared memory, threads in wasm or special headers.

mod client;
mod worker;

pub use client::{HelperError, HelperWorker};
pub use worker::run_helper_worker;
