//! The page's heavy worker: Trunk builds this binary for wasm32 (with training and WebGPU)
//! and the page starts it as a Web Worker (`worker_loader.js`) in one of its roles, so that
//! none ever blocks or ends the page: `?role=gpu` runs the page's model on WebGPU (the drawing
//! worker's code), `?role=helper` (started by the training worker) computes half of each CPU
//! step, any other trains. The model on the CPU runs in the page's own binary, started as a
//! worker (`main.rs`); explanations in a binary of their own (`explainer.rs`).

#[cfg(target_arch = "wasm32")]
unsafe extern "C" {
    /// The static constructors wasm-ld gathers (Burn's and CubeCL's registrations).
    fn __wasm_call_ctors();
}

#[cfg(target_arch = "wasm32")]
fn main() {
    use vitlab::protocol::BackendKind;
    use vitlab::web::{self, WorkerRole};
    // Once, here: otherwise wasm-ld re-runs them on every call into the worker (see main.rs).
    // SAFETY: wasm-ld's constructor list, called once before any other code of ours runs.
    unsafe { __wasm_call_ctors() };
    console_error_panic_hook::set_once();
    web::report_rejections_as_errors();
    match WorkerRole::of_this_worker() {
        WorkerRole::Gpu => web::run_drawing_worker(BackendKind::WebGpu),
        WorkerRole::Train => web::run_training_worker(),
        WorkerRole::Helper => web::run_helper_worker(),
        // The page's binary's; asked of this one, the CPU is the same model. Explanations are
        // never asked of this binary (`of_this_worker` does not name them): the CPU's drawing
        // too, rather than code of theirs linked here.
        WorkerRole::Draw | WorkerRole::Explain => web::run_drawing_worker(BackendKind::Cpu),
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("worker is the page's Web Worker; natively, train with `vit train`.");
}
