//! The entry of the page's heavy worker binaries, `worker` and `worker_fma` (the same with its
//! matrix product in fused multiply-adds): Trunk builds them for wasm32 with training and
//! WebGPU, and the page starts one as a Web Worker (`link.rs` chooses which) in one of its
//! roles, so that none ever blocks or ends the page: `?role=gpu` runs the page's model on
//! WebGPU (the drawing worker's code), `?role=explain` explains drawings, `?role=helper`
//! (started by the training worker) computes shards of each CPU step, any other trains. The
//! model on the CPU runs in the page's own binary, started as a worker (`main.rs`).
//!
//! Explanations share this binary rather than one of their own: the GPU stack, Burn and the
//! model are most of either, so a visitor who trains and explains fetched 2.8 MB gzip twice.

use crate::protocol::BackendKind;

use super::WorkerRole;

/// Runs this worker in the role its URL names, once the binary has run its static constructors.
pub fn run_heavy_worker() {
    console_error_panic_hook::set_once();
    super::report_rejections_as_errors();
    match WorkerRole::of_this_worker() {
        WorkerRole::Gpu => super::run_drawing_worker(BackendKind::WebGpu),
        WorkerRole::Explain => super::run_explaining_worker(),
        WorkerRole::Train => super::run_training_worker(),
        WorkerRole::Helper => super::run_helper_worker(),
        // The page's binary's; asked of this one, the CPU is the same model.
        WorkerRole::Draw => super::run_drawing_worker(BackendKind::Cpu),
    }
}
