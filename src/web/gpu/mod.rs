//! The page's model on WebGPU, run in a worker of its own.

mod client;
#[cfg(feature = "gpu")]
mod worker;

pub use client::{GpuError, GpuWorker};
#[cfg(feature = "gpu")]
pub use worker::run_gpu_worker;
