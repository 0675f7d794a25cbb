//! The page's model on WebGPU, run in a worker of its own.

mod client;
pub mod protocol;
#[cfg(feature = "gpu")]
mod worker;

pub use client::GpuWorker;
#[cfg(feature = "gpu")]
pub use worker::run_gpu_worker;
