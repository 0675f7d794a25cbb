//! What both browser test crates (`web.rs`, `web_ui.rs`) use: the fixtures, real digits, a
//! wait, and the CPU model answering in the test's own thread.

use std::rc::Rc;

use vitlab::protocol::BackendKind;
use vitlab::web::Engine;
use vitlab::web::drawing::{DrawingWorker, InThread};
use wasm_bindgen_futures::JsFuture;

pub const PARITY_WEIGHTS: &[u8] = include_bytes!("../fixtures/parity.safetensors");
pub const FIRST_TRAIN_CHUNK: &[u8] = include_bytes!("../../www/mnist/train-000.bin");

/// The first `count` digits of the first training chunk.
pub fn real_digits(count: usize) -> vitlab::data::MnistSet {
    vitlab::data::decode_chunk_unverified(FIRST_TRAIN_CHUNK)
        .unwrap()
        .slice(0..count)
}

pub async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms)
            .unwrap();
    });
    JsFuture::from(promise).await.unwrap();
}

/// The CPU's drawing worker's model, answering in this thread as the worker answers the page
/// (the browser tests have no worker script to start).
pub fn drawing_here() -> Rc<DrawingWorker> {
    DrawingWorker::on(InThread::new(BackendKind::Cpu))
}

pub async fn engine_here(weights: &[u8]) -> Engine {
    Engine::load(weights, drawing_here(), BackendKind::Cpu)
        .await
        .unwrap()
}
