//! The training worker: runs inside a dedicated Web Worker so the page never waits on a step.
//! One async loop owns the run; messages and arriving chunks wait in an inbox it drains
//! between steps.
//!
//! `inbox` holds what waits, `commands` answers the page, `stepping` trains, evaluates and
//! saves, `loader` fetches the data. The page's side is `web::trainer_client`; what they say
//! is `crate::protocol`.

mod commands;
mod inbox;
mod loader;
mod stepping;

use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::data::Split;
use crate::protocol::{FromTrainer, RunState};

use crate::web::global::{now_ms, sleep_ms};
use crate::web::packet::Packet;

use commands::{fail_without_run, handle};
use inbox::Inbox;
use stepping::{Run, train_step};

/// Step reports are batched to at most one message per this many milliseconds.
const REPORT_EVERY_MS: f64 = 100.0;
/// The loop lets queued messages in at least this often.
const YIELD_EVERY_MS: f64 = 50.0;
/// Steps read back together at most; on a GPU they run back to back meanwhile.
const READ_EVERY_STEPS: usize = 8;
/// Steps in flight are read back once the oldest began this long ago (on the CPU, whose steps
/// run as they are taken, that is every step or two).
const READ_EVERY_MS: f64 = 200.0;
const EVAL_BATCH: usize = 250;
const SAMPLES: usize = 16;

/// Sends a message to the page; weights bytes go beside it, transferred rather than copied.
pub fn post(message: &FromTrainer, bytes: Option<Vec<u8>>) {
    Packet::new(message, bytes).send_to_page();
}

fn notice(message: impl Into<String>, warning: bool) {
    post(
        &FromTrainer::Notice {
            message: message.into(),
            warning,
        },
        None,
    );
}

fn set_state(run: &mut Run, state: RunState) {
    run.state = state;
    post(&FromTrainer::State { state }, None);
}

/// The worker's entry point: listens for the page and starts the loop.
pub fn run_training_worker() {
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let inbox = Rc::new(Inbox::default());
    let listener = {
        let inbox = inbox.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let parsed = Packet::read(&event)
                .ok_or_else(|| "a message that is not a packet".to_string())
                .and_then(|packet| Ok((packet.parse()?, packet.bytes)));
            match parsed {
                Ok((message, bytes)) => inbox.push(message, bytes),
                Err(error) => notice(format!("the worker ignored a message: {error}"), true),
            }
        })
    };
    scope.set_onmessage(Some(listener.as_ref().unchecked_ref()));
    listener.forget();
    post(&FromTrainer::Ready, None);
    spawn_local(main_loop(inbox));
}

async fn main_loop(inbox: Rc<Inbox>) {
    let mut run: Option<Run> = None;
    let mut last_yield = now_ms();
    loop {
        let message = inbox.messages.borrow_mut().pop_front();
        if let Some((message, bytes)) = message {
            handle(message, bytes, &mut run, &inbox).await;
            continue;
        }
        let arrived: Vec<_> = inbox.chunks.borrow_mut().drain(..).collect();
        if let Some(run) = run.as_mut() {
            for (_, split, set) in arrived {
                match split {
                    Split::Train => run.session.offer_train(set),
                    Split::Test => run.session.add_test(&set),
                }
            }
        }
        if let Some(generation) = inbox.loaded_all.take()
            && generation == inbox.generation.get()
            && let Some(run) = run.as_mut()
        {
            // A chunk given up on cannot hold a resumed run's pass for good.
            run.session.data_complete();
        }
        if let Some(generation) = inbox.no_training_data.take() {
            // Without a single training image the run would wait for data forever.
            if generation == inbox.generation.get()
                && run.as_ref().is_some_and(|r| r.session.train_loaded() == 0)
            {
                run = None;
                fail_without_run(
                    "None of the training data could be loaded, so the run cannot start: check the connection and start again.".into(),
                );
            }
        }
        let ready = run
            .as_ref()
            .is_some_and(|run| run.state == RunState::Running && run.session.can_step());
        if !ready {
            inbox.wait().await;
            last_yield = now_ms();
            continue;
        }
        train_step(&mut run).await;
        if now_ms() - last_yield > YIELD_EVERY_MS {
            sleep_ms(0).await;
            last_yield = now_ms();
        }
    }
}
