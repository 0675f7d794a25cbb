//! The page's heavy worker, its matrix product in a multiply and an add (SIMD128): the one the
//! page starts where the browser lacks relaxed SIMD (WebKit). `worker_fma.rs` is this file built
//! with fused multiply-adds. Its roles: `web::heavy_worker`.

#[cfg(target_arch = "wasm32")]
unsafe extern "C" {
    /// The static constructors wasm-ld gathers (Burn's and CubeCL's registrations).
    fn __wasm_call_ctors();
}

#[cfg(target_arch = "wasm32")]
pub fn main() {
    // Once, here: otherwise wasm-ld re-runs them on every call into the worker (see main.rs).
    // In the binary, not the library: a module that names them must call them itself, and the
    // browser tests' module does not.
    // SAFETY: wasm-ld's constructor list, called once before any other code of ours runs.
    unsafe { __wasm_call_ctors() };
    vitlab::web::run_heavy_worker();
}

#[cfg(not(target_arch = "wasm32"))]
pub fn main() {
    eprintln!("the heavy worker is the page's Web Worker; natively, train with `vit train`.");
}
