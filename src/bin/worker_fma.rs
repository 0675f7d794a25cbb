//! The page's heavy worker built with `fused-madd`: its matrix product in relaxed SIMD's fused
//! multiply-adds, started where the browser validates relaxed SIMD (Chromium, Firefox). Every
//! worker of a run is this one or the plain `worker`, never both, as their sums differ in the
//! last bits. The same entry as `worker.rs`.

#[path = "worker.rs"]
mod worker;

fn main() {
    worker::main();
}
