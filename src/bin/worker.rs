//! The page's worker: Trunk builds this binary for wasm32 and the page starts it as a Web
//! Worker (`worker_loader.js`) in one of its roles, so that none ever blocks or ends the page:
//! `?role=gpu` runs the page's model on WebGPU (`?role=explain` the same code, to explain drawings), `?role=helper` (started by the training worker)
//! computes half of each CPU step, any other trains.

#[cfg(target_arch = "wasm32")]
unsafe extern "C" {
    /// The static constructors wasm-ld gathers (Burn's and CubeCL's registrations).
    fn __wasm_call_ctors();
}

#[cfg(target_arch = "wasm32")]
fn main() {
    // Once, here: otherwise wasm-ld re-runs them on every call into the worker (see main.rs).
    // SAFETY: wasm-ld's constructor list, called once before any other code of ours runs.
    unsafe { __wasm_call_ctors() };
    console_error_panic_hook::set_once();
    vitlab::web::report_rejections_as_errors();
    match vitlab::web::WorkerRole::of_this_worker() {
        vitlab::web::WorkerRole::Gpu | vitlab::web::WorkerRole::Explain => {
            vitlab::web::run_gpu_worker()
        }
        vitlab::web::WorkerRole::Train => vitlab::web::run_training_worker(),
        vitlab::web::WorkerRole::Helper => vitlab::web::run_helper_worker(),
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("worker is the page's Web Worker; natively, train with `vit train`.");
}
