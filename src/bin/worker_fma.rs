//! The page's heavy worker with its matrix product in relaxed SIMD's fused multiply-adds,
//! started where the browser validates relaxed SIMD (Chromium, Firefox). Every worker of a run
//! is this one or the plain `worker`, never both, as their sums differ in the last bits. The
//! same library build and entry as `worker.rs`; only its tile differs, made here in this crate
//! because LLVM gives every function of a wasm module the features of any one of them
//! (`model::use_tile` says more).

#[path = "worker.rs"]
mod worker;

#[cfg(target_arch = "wasm32")]
vitlab::simd_tile!(fused fused_tile);

fn main() {
    #[cfg(target_arch = "wasm32")]
    vitlab::model::use_tile(fused_tile);
    worker::main();
}
