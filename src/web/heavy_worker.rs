//! The entry of the page's heavy worker binaries, `worker` and `worker_fma` (the same with its
//! matrix product in fused multiply-adds): Trunk builds them for wasm32 with training and
//! WebGPU, and the page starts one as a Web Worker (`link.rs` chooses which) in one of its
//! roles, so that none ever blocks or ends the page: `?role=gpu` runs the page's model on
//! WebGPU (the drawing worker's code), `?role=helper` (started by the training worker) computes
//! shards of each CPU step, any other trains. The model on the CPU runs in the page's own
//! binary, started as a worker (`main.rs`); explanations in a binary of their own.

use crate::protocol::BackendKind;

use super::WorkerRole;

/// Runs this worker in the role its URL names, once the binary has run its static constructors.
pub fn run_heavy_worker() {
    console_error_panic_hook::set_once();
    super::report_rejections_as_errors();
    match WorkerRole::of_this_worker() {
        WorkerRole::Gpu => super::run_drawing_worker(BackendKind::WebGpu),
        WorkerRole::Train => super::run_training_worker(),
        WorkerRole::Helper => super::run_helper_worker(),
        // The page's binary's; asked of this one, the CPU is the same model. Explanations are
        // never asked of this binary (`of_this_worker` does not name them): the CPU's drawing
        // too, rather than code of theirs linked here.
        WorkerRole::Draw | WorkerRole::Explain => super::run_drawing_worker(BackendKind::Cpu),
    }
}
