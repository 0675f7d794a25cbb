//! What waits for the training loop: messages from the page and chunks from the loader.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::data::{MnistSet, Split};
use crate::protocol::ToTrainer;

/// What waits for the loop: messages from the page and chunks from the loader.
#[derive(Default)]
pub(super) struct Inbox {
    pub(super) messages: RefCell<VecDeque<(ToTrainer, Option<Vec<u8>>)>>,
    pub(super) chunks: RefCell<Vec<(u32, Split, MnistSet)>>,
    /// Bumped by every new run, so a loader of an old run stops delivering.
    pub(super) generation: Cell<u32>,
    /// The generation of a loader that ended without a single training chunk.
    pub(super) no_training_data: Cell<Option<u32>>,
    /// The generation of a loader that has tried every chunk.
    pub(super) loaded_all: Cell<Option<u32>>,
    pub(super) wake: RefCell<Option<js_sys::Function>>,
}

impl Inbox {
    pub(super) fn push(&self, message: ToTrainer, bytes: Option<Vec<u8>>) {
        self.messages.borrow_mut().push_back((message, bytes));
        self.wake();
    }

    pub(super) fn deliver(&self, generation: u32, split: Split, set: MnistSet) {
        if generation == self.generation.get() {
            self.chunks.borrow_mut().push((generation, split, set));
            self.wake();
        }
    }

    pub(super) fn give_up(&self, generation: u32) {
        if generation == self.generation.get() {
            self.no_training_data.set(Some(generation));
            self.wake();
        }
    }

    pub(super) fn done_loading(&self, generation: u32) {
        if generation == self.generation.get() {
            self.loaded_all.set(Some(generation));
            self.wake();
        }
    }

    pub(super) fn wake(&self) {
        if let Some(resolve) = self.wake.borrow_mut().take() {
            let _ = resolve.call0(&JsValue::NULL);
        }
    }

    /// Until the page asks to stop or to reset; the message stays for the loop to handle.
    pub(super) async fn stop_asked(&self) {
        let asked = |(message, _): &(ToTrainer, Option<Vec<u8>>)| {
            matches!(message, ToTrainer::Stop | ToTrainer::Reset)
        };
        while !self.messages.borrow().iter().any(asked) {
            let promise = Promise::new(&mut |resolve, _| *self.wake.borrow_mut() = Some(resolve));
            let _ = JsFuture::from(promise).await;
        }
    }

    /// Until a message or a chunk arrives.
    pub(super) async fn wait(&self) {
        if !self.messages.borrow().is_empty()
            || !self.chunks.borrow().is_empty()
            || self.no_training_data.get().is_some()
            || self.loaded_all.get().is_some()
        {
            return;
        }
        let promise = Promise::new(&mut |resolve, _| *self.wake.borrow_mut() = Some(resolve));
        let _ = JsFuture::from(promise).await;
    }
}
