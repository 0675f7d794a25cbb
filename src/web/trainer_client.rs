//! The page's side of the training worker.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, MessageEvent, Worker};

use crate::protocol::{FromTrainer, ToTrainer};

use super::global::describe;
use super::packet::Packet;

/// The workers' script: Trunk's loader shim for the `worker` binary, beside the page.
pub const WORKER_SCRIPT: &str = "./worker_loader.js";

/// A running training worker; dropping it ends the worker.
pub struct TrainerWorker {
    worker: Worker,
    /// Messages held back until the worker says it listens; `None` once it does.
    waiting: Rc<RefCell<Option<Vec<Packet>>>>,
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
        // `?cpu-workers=1` on the page asks the worker to train without its helper.
        let one_worker = super::query_param(super::CPU_WORKERS_PARAM)
            .filter(|count| count == "1")
            .map(|count| format!("&{}={count}", super::CPU_WORKERS_PARAM))
            .unwrap_or_default();
        let worker = Worker::new(&format!("{WORKER_SCRIPT}?role=train{one_worker}"))
            .map_err(|e| format!("the training worker did not start: {}", describe(e)))?;
        let waiting = Rc::new(RefCell::new(Some(Vec::<Packet>::new())));
        let (held, target) = (waiting.clone(), worker.clone());
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let Some(packet) = Packet::read(&event) else {
                return;
            };
            match packet.parse::<FromTrainer>() {
                Ok(FromTrainer::Ready) => {
                    for message in held.borrow_mut().take().unwrap_or_default() {
                        let _ = message.send_to(&target);
                    }
                }
                Ok(message) => on_message(message, packet.bytes),
                Err(error) => {
                    web_sys::console::warn_1(&format!("the training worker sent {error}").into())
                }
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

    /// Sends `message`, with `bytes` (a run file) beside it.
    pub fn send(&self, message: &ToTrainer, bytes: Option<Vec<u8>>) {
        let packet = Packet::new(message, bytes);
        match self.waiting.borrow_mut().as_mut() {
            Some(held) => held.push(packet),
            None => {
                let _ = packet.send_to(&self.worker);
            }
        }
    }
}

impl Drop for TrainerWorker {
    fn drop(&mut self) {
        // Events already queued must find no handler rather than a dropped closure.
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.terminate();
    }
}
