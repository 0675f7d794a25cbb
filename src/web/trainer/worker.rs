//! Inside the training worker: the listener that fills the inbox, and the one loop that owns
//! the run and drains the inbox between steps.

use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::data::Split;
use crate::protocol::{FromTrainer, RunState, TrainerFailure};

use crate::web::global::{now_ms, yield_to_messages};
use crate::web::packet::{Packet, PacketError};

use super::commands::handle;
use super::inbox::Inbox;
use super::runner::Runner;
use super::to_page::{fail_without_run, notice, post};

/// The loop lets queued messages in at least this often.
const YIELD_EVERY_MS: f64 = 50.0;

/// The worker's entry point: listens for the page and starts the loop.
pub fn run_training_worker() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let inbox = Rc::new(Inbox::default());
    let listener = {
        let inbox = inbox.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let parsed = Packet::read(&event)
                .ok_or(PacketError::NotAPacket)
                .and_then(|packet| Ok((packet.parse()?, packet.bytes)));
            match parsed {
                Ok((message, bytes)) => inbox.push(message, bytes),
                Err(error) => notice(format!("the worker ignored a message: {error}"), true),
            }
        })
    };
    scope.set_onmessage(Some(listener.as_ref().unchecked_ref()));
    listener.forget();
    post(
        &FromTrainer::Listening {
            build: crate::protocol::BUILD.to_string(),
        },
        None,
    );
    spawn_local(main_loop(inbox));
}

async fn main_loop(inbox: Rc<Inbox>) {
    let mut runner = Runner::default();
    let mut last_yield = now_ms();
    loop {
        let message = inbox.messages.borrow_mut().pop_front();
        if let Some((message, bytes)) = message {
            handle(message, bytes, &mut runner, &inbox).await;
            continue;
        }
        let arrived: Vec<_> = inbox.chunks.borrow_mut().drain(..).collect();
        if let Some(run) = runner.run_mut() {
            for (_, split, set) in arrived {
                match split {
                    Split::Train => run.session.offer_train(set),
                    Split::Test => run.session.add_test(&set),
                }
            }
        }
        if let Some(generation) = inbox.loaded_all.take()
            && generation == inbox.generation.get()
            && let Some(run) = runner.run_mut()
        {
            // A chunk given up on cannot hold a resumed run's pass for good.
            run.session.data_complete();
        }
        if let Some(generation) = inbox.no_training_data.take() {
            // Without a single MNIST image the run would wait for data forever (or, fine-tuning,
            // learn a person's digits alone and forget MNIST).
            if generation == inbox.generation.get()
                && runner.run().is_some_and(|r| r.session.mnist_loaded() == 0)
            {
                runner.end();
                fail_without_run(TrainerFailure::NoTrainingData);
            }
        }
        let ready = runner
            .run()
            .is_some_and(|run| run.state == RunState::Running && run.session.can_step());
        if !ready {
            inbox.wait().await;
            last_yield = now_ms();
            continue;
        }
        runner.train_step().await;
        if now_ms() - last_yield > YIELD_EVERY_MS {
            yield_to_messages().await;
            last_yield = now_ms();
        }
    }
}
