//! The training worker: Trunk builds this binary for wasm32 and the page starts it as a Web
//! Worker (`trainer_loader.js`), so training never blocks the page.

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    vitlab::web::run_training_worker();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("trainer is the page's training worker; natively, train with `vit train`.");
}
