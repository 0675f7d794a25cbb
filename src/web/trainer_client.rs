//! The page's side of the training worker.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, MessageEvent, Worker};

use crate::train::messages::{FromTrainer, ToTrainer};

use super::global::describe;

/// The worker's script: Trunk's loader shim for the `trainer` binary, beside the page.
pub const TRAINER_SCRIPT: &str = "./trainer_loader.js";

/// A running training worker; dropping it ends the worker.
pub struct TrainerWorker {
    worker: Worker,
    /// Messages held back until the worker says it listens; `None` once it does.
    waiting: Rc<RefCell<Option<Vec<String>>>>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(ErrorEvent)>,
}

impl TrainerWorker {
    /// Starts the worker. `on_message` gets each message with the bytes sent beside it;
    /// `on_error` hears when the worker dies (a panic, a lost device, out of memory).
    pub fn spawn(
        mut on_message: impl FnMut(FromTrainer, Option<Vec<u8>>) + 'static,
        mut on_error: impl FnMut(String) + 'static,
    ) -> Result<Self, String> {
        let worker = Worker::new(TRAINER_SCRIPT)
            .map_err(|e| format!("the training worker did not start: {}", describe(e)))?;
        let waiting = Rc::new(RefCell::new(Some(Vec::<String>::new())));
        let (held, target) = (waiting.clone(), worker.clone());
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let packet: Array = event.data().unchecked_into();
            let Some(json) = packet.get(0).as_string() else {
                return;
            };
            let bytes = packet
                .get(1)
                .dyn_into::<Uint8Array>()
                .ok()
                .map(|array| array.to_vec());
            match serde_json::from_str::<FromTrainer>(&json) {
                Ok(FromTrainer::Ready) => {
                    for message in held.borrow_mut().take().unwrap_or_default() {
                        let _ = target.post_message(&message.into());
                    }
                }
                Ok(message) => on_message(message, bytes),
                Err(error) => web_sys::console::warn_1(
                    &format!("an unreadable message from the worker: {error}").into(),
                ),
            }
        });
        let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |event: ErrorEvent| {
            event.prevent_default();
            let message = event.message();
            on_error(if message.is_empty() {
                "the training worker stopped".to_string()
            } else {
                message
            });
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Ok(Self {
            worker,
            waiting,
            _on_message: on_message,
            _on_error: on_error,
        })
    }

    pub fn send(&self, message: &ToTrainer) {
        let json = serde_json::to_string(message).expect("messages serialise");
        match self.waiting.borrow_mut().as_mut() {
            Some(held) => held.push(json),
            None => {
                let _ = self.worker.post_message(&json.into());
            }
        }
    }
}

impl Drop for TrainerWorker {
    fn drop(&mut self) {
        self.worker.terminate();
    }
}
