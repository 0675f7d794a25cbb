//! The model the lab draws with, in a worker of its own: the page's own binary on the CPU
//! (started again as a module worker, `drawer.js`), the `worker` binary in `role=gpu` on
//! WebGPU. One protocol (`protocol::drawing`), one worker
//! (`worker.rs`), one client (`client.rs`) for both.

mod client;
mod worker;

pub use client::{Answer, DrawingError, DrawingWorker, Port, TestDigit};
pub use worker::{DrawingModel, FILTER_COMPONENTS, InThread, run_drawing_worker};
