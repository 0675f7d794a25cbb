//! The explaining worker: Trunk builds this binary for wasm32 (with autodiff and WebGPU) and
//! the page starts it as a Web Worker (`explainer_loader.js`) the first time a drawing is
//! explained (gradient relevance, the logit lens, occlusion, which heads matter, the ViT
//! against the CNN). A binary of its own so that Train does not fetch what only explanations
//! use, and an explanation does not fetch the trainer.

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
    vitlab::web::run_explaining_worker();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!(
        "explainer is the page's explaining Web Worker; natively, see `vit occlusion` and `vit ablate`."
    );
}
