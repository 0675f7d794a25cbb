//! The training worker: Trunk builds this binary for wasm32 and the page starts it as a Web
//! Worker (`trainer_loader.js`), so training never blocks the page.

#[cfg(target_arch = "wasm32")]
unsafe extern "C" {
    /// The static constructors wasm-ld gathers (Burn's and CubeCL's registrations).
    fn __wasm_call_ctors();
}

#[cfg(target_arch = "wasm32")]
fn main() {
    // Once, here: otherwise wasm-ld re-runs them on every call into the worker (see main.rs).
    unsafe { __wasm_call_ctors() };
    console_error_panic_hook::set_once();
    vitlab::web::run_training_worker();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("trainer is the page's training worker; natively, train with `vit train`.");
}
