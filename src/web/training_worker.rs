//! The training worker: runs inside a dedicated Web Worker so the page never waits on a step.
//! One async loop owns the run; messages and arriving chunks wait in an inbox it drains
//! between steps.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, spawn_local};
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use burn::tensor::{Device, Tensor};

use crate::data::{ChunkEntry, Manifest, MnistSet, RetryPolicy, Split};
use crate::model::Budget;
use crate::protocol::{DataProgress, FromTrainer, RunState, ToTrainer, WeightsPurpose};
use crate::train::{
    Checkpoint, PendingStep, Session, StepPoint, StepReport, TestReport, TrainingError,
    TrainingPlan, classify_in_batches,
};
use crate::weights;

use super::Backend;
use super::chunks::{ChunkSource, DATA_BASE};
use super::device_trial::training_device;
use super::global::{now_ms, sleep_ms};
use super::packet::Packet;
use super::read::{read_floats, read_ints};
use super::saved_run;

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

/// What waits for the loop: messages from the page and chunks from the loader.
#[derive(Default)]
struct Inbox {
    messages: RefCell<VecDeque<(ToTrainer, Option<Vec<u8>>)>>,
    chunks: RefCell<Vec<(u32, Split, MnistSet)>>,
    /// Bumped by every new run, so a loader of an old run stops delivering.
    generation: Cell<u32>,
    /// The generation of a loader that ended without a single training chunk.
    no_training_data: Cell<Option<u32>>,
    /// The generation of a loader that has tried every chunk.
    loaded_all: Cell<Option<u32>>,
    wake: RefCell<Option<js_sys::Function>>,
}

impl Inbox {
    fn push(&self, message: ToTrainer, bytes: Option<Vec<u8>>) {
        self.messages.borrow_mut().push_back((message, bytes));
        self.wake();
    }

    fn deliver(&self, generation: u32, split: Split, set: MnistSet) {
        if generation == self.generation.get() {
            self.chunks.borrow_mut().push((generation, split, set));
            self.wake();
        }
    }

    fn give_up(&self, generation: u32) {
        if generation == self.generation.get() {
            self.no_training_data.set(Some(generation));
            self.wake();
        }
    }

    fn done_loading(&self, generation: u32) {
        if generation == self.generation.get() {
            self.loaded_all.set(Some(generation));
            self.wake();
        }
    }

    fn wake(&self) {
        if let Some(resolve) = self.wake.borrow_mut().take() {
            let _ = resolve.call0(&JsValue::NULL);
        }
    }

    /// Until a message or a chunk arrives.
    async fn wait(&self) {
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

/// The run in progress.
struct Run {
    session: Session,
    backend: Backend,
    state: RunState,
    /// Why the device is not the one asked for, if it is not.
    device_note: Option<String>,
    /// Steps taken whose loss and accuracy have not been read back yet, oldest first.
    in_flight: Vec<PendingStep>,
    /// When the oldest of them began.
    in_flight_since: f64,
    unsent: Vec<StepPoint>,
    /// The newest step's report, sent with the next batch of points.
    latest: Option<StepReport>,
    last_report_ms: f64,
    /// Step of the last save, to say what a failure falls back to.
    saved_step: Option<usize>,
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
                    Split::Train => run.session.add_train(&set),
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

async fn handle(
    message: ToTrainer,
    bytes: Option<Vec<u8>>,
    run: &mut Option<Run>,
    inbox: &Rc<Inbox>,
) {
    match message {
        ToTrainer::Probe => {
            let summary = saved_run::saved_summary().await;
            post(&FromTrainer::Saved { summary }, None);
        }
        ToTrainer::Start { plan, backend } => {
            // The saved run stays until this one's first save replaces it: a start that fails
            // (offline, a bad manifest, a lost device) loses nothing.
            let trial = plan.clone();
            launch(run, inbox, &backend, &trial, None, |manifest, device| {
                Session::new(plan, manifest.items(Split::Train), device)
            })
            .await;
        }
        ToTrainer::ResumeSaved { backend } => {
            let saved = match saved_run::load_run().await {
                Ok(saved) => saved,
                Err(message) => return fail_without_run(message),
            };
            let step = saved.state.step;
            let trial = saved.state.plan.clone();
            launch(run, inbox, &backend, &trial, Some(step), |_, device| {
                Session::resume(saved, device)
                    .map_err(|message| format!("the saved run: {message}"))
            })
            .await;
        }
        ToTrainer::ResumeFile { backend } => {
            let Some(bytes) = bytes else {
                return fail_without_run("no run file came with the message".into());
            };
            let checkpoint = match Checkpoint::decode(&bytes, &Budget::PAGE) {
                Ok(checkpoint) => checkpoint,
                Err(error) => {
                    return fail_without_run(format!("The run file cannot be resumed: {error}."));
                }
            };
            let trial = checkpoint.state.plan.clone();
            // Not saved in this browser yet: its first save here replaces the saved run.
            launch(run, inbox, &backend, &trial, None, |_, device| {
                Session::resume(checkpoint, device)
                    .map_err(|message| format!("the run file: {message}"))
            })
            .await;
        }
        ToTrainer::Pause => {
            if run.as_ref().is_some_and(|r| r.state == RunState::Running) && !settle(run).await {
                return;
            }
            if let Some(run) = run.as_mut().filter(|r| r.state == RunState::Running) {
                flush_steps(run);
                set_state(run, RunState::Paused);
                save(run).await;
            }
        }
        ToTrainer::Resume => {
            if let Some(run) = run.as_mut().filter(|r| {
                matches!(
                    r.state,
                    RunState::Paused | RunState::Stopped | RunState::Failed
                ) && !r.session.is_finished()
            }) {
                set_state(run, RunState::Running);
            }
        }
        ToTrainer::Stop => {
            if run.as_ref().is_some_and(|r| r.state == RunState::Running) && !settle(run).await {
                return;
            }
            if let Some(run) = run
                .as_mut()
                .filter(|r| r.state == RunState::Running || r.state == RunState::Paused)
            {
                flush_steps(run);
                set_state(run, RunState::Stopped);
                save(run).await;
            }
        }
        ToTrainer::Reset => {
            *run = None;
            inbox.generation.set(inbox.generation.get() + 1);
            inbox.chunks.borrow_mut().clear();
            saved_run::forget_run().await;
            post(
                &FromTrainer::State {
                    state: RunState::Idle,
                },
                None,
            );
        }
        ToTrainer::ExportWeights { purpose } => export(run.as_ref(), purpose).await,
        ToTrainer::ExportRun => export_run(run.as_ref()).await,
    }
}

/// The run is gone, or never began: says why, and the page goes back to idle.
fn fail_without_run(message: String) {
    post(&FromTrainer::Failed { message }, None);
    post(
        &FromTrainer::State {
            state: RunState::Idle,
        },
        None,
    );
}

/// Starts a run: the device (timed against the other for `plan` when none is asked for), the
/// manifest, the session `build` makes on them, then the data. `saved_step` is the step of
/// the save the session was restored from, if it was.
async fn launch(
    run: &mut Option<Run>,
    inbox: &Rc<Inbox>,
    backend: &Option<Backend>,
    plan: &TrainingPlan,
    saved_step: Option<usize>,
    build: impl FnOnce(&Manifest, &Device) -> Result<Session, String>,
) {
    *run = None;
    post(
        &FromTrainer::State {
            state: RunState::Starting,
        },
        None,
    );
    let started = training_device(*backend, plan).await;
    let source = ChunkSource::open(DATA_BASE).await;
    let manifest = match source.manifest().await {
        Ok(manifest) => manifest,
        Err(message) => return fail_without_run(message),
    };
    let session = match build(&manifest, &started.device) {
        Ok(session) => session,
        Err(message) => return fail_without_run(message),
    };
    inbox.generation.set(inbox.generation.get() + 1);
    inbox.chunks.borrow_mut().clear();
    let mut new_run = Run {
        session,
        backend: started.backend,
        state: RunState::Starting,
        device_note: started.fallback_reason,
        in_flight: Vec::new(),
        in_flight_since: 0.0,
        unsent: Vec::new(),
        latest: None,
        last_report_ms: 0.0,
        saved_step,
    };
    announce(&new_run);
    set_state(&mut new_run, RunState::Running);
    *run = Some(new_run);
    spawn_local(load_data(source, manifest, inbox.clone()));
}

/// Fetches every chunk: the first training and test chunks first, so training and evaluation
/// can begin while the rest arrive.
async fn load_data(source: ChunkSource, manifest: Manifest, inbox: Rc<Inbox>) {
    let generation = inbox.generation.get();
    let (train, test) = (manifest.chunks(Split::Train), manifest.chunks(Split::Test));
    let mut train_chunks_loaded = 0;
    let mut order: Vec<(Split, &ChunkEntry)> = Vec::new();
    order.extend(train.first().map(|c| (Split::Train, c)));
    order.extend(test.first().map(|c| (Split::Test, c)));
    order.extend(train.iter().skip(1).map(|c| (Split::Train, c)));
    order.extend(test.iter().skip(1).map(|c| (Split::Test, c)));
    let mut progress = DataProgress {
        total_chunks: order.len(),
        total_bytes: order.iter().map(|(_, c)| c.bytes).sum(),
        total_images: order.iter().map(|(_, c)| c.items).sum(),
        ..DataProgress::default()
    };
    post(&FromTrainer::Data(progress), None);
    for (split, entry) in order {
        if inbox.generation.get() != generation {
            return;
        }
        let loaded = source
            .load(entry, RetryPolicy::default(), |retry| {
                notice(format!("Retrying {retry}"), false)
            })
            .await;
        if inbox.generation.get() != generation {
            return;
        }
        match loaded {
            Ok(chunk) => {
                progress.chunks += 1;
                progress.bytes += entry.bytes;
                progress.images += chunk.set.len();
                progress.cached_chunks += usize::from(chunk.from_cache);
                post(&FromTrainer::Data(progress), None);
                if split == Split::Train && progress.chunks == 1 {
                    let count = SAMPLES.min(chunk.set.len());
                    post(
                        &FromTrainer::Samples {
                            images: (0..count).map(|i| chunk.set.image(i).to_vec()).collect(),
                            labels: chunk.set.labels[..count].to_vec(),
                        },
                        None,
                    );
                }
                train_chunks_loaded += usize::from(split == Split::Train);
                inbox.deliver(generation, split, chunk.set);
            }
            Err(message) => notice(
                format!("{message}. Training goes on without this chunk."),
                true,
            ),
        }
    }
    if train_chunks_loaded == 0 {
        inbox.give_up(generation);
    }
    inbox.done_loading(generation);
}

/// Tells the page the run's device, plan and history (the charts start from it).
fn announce(run: &Run) {
    post(
        &FromTrainer::Started {
            backend: run.backend,
            note: run.device_note.clone(),
            plan: run.session.plan.clone(),
            history: run.session.history.clone(),
        },
        None,
    );
}

/// Sends the steps not yet reported.
fn flush_steps(run: &mut Run) {
    if run.unsent.is_empty() {
        return;
    }
    let Some(report) = run.latest.clone() else {
        return;
    };
    post(
        &FromTrainer::Steps {
            points: std::mem::take(&mut run.unsent),
            report,
        },
        None,
    );
    run.last_report_ms = now_ms();
}

/// Takes one step. Its loss and accuracy stay on the device until several steps are in flight
/// (or the oldest began [`READ_EVERY_MS`] ago, or an evaluation or the end is due): then one
/// readback brings them all, so the GPU never waits on the page between steps.
async fn train_step(slot: &mut Option<Run>) {
    let Some(run) = slot.as_mut() else { return };
    if run.in_flight.is_empty() {
        run.in_flight_since = now_ms();
    }
    let began = match run.session.begin_step() {
        Some(pending) => {
            run.in_flight.push(pending);
            true
        }
        None => false,
    };
    let evaluate_now = run.session.evaluation_due();
    let read_now = !began
        || evaluate_now
        || run.session.is_finished()
        || run.in_flight.len() >= READ_EVERY_STEPS
        || now_ms() - run.in_flight_since >= READ_EVERY_MS;
    if !read_now || !settle(slot).await {
        return;
    }
    let Some(run) = slot.as_mut() else { return };
    if evaluate_now || now_ms() - run.last_report_ms > REPORT_EVERY_MS {
        flush_steps(run);
    }
    if evaluate_now {
        match evaluate(&mut run.session).await {
            Ok(Some(report)) => post(&FromTrainer::Test(report), None),
            Ok(None) => {}
            Err(message) => return device_failed(run, message).await,
        }
        save(run).await;
    }
    if run.session.is_finished() {
        flush_steps(run);
        set_state(run, RunState::Finished);
    }
}

/// Reads back every step in flight with one readback and books them in order. `false` when
/// the run cannot go on (the device failed, or the loss stopped being finite).
async fn settle(slot: &mut Option<Run>) -> bool {
    let Some(run) = slot.as_mut() else {
        return false;
    };
    if run.in_flight.is_empty() {
        return true;
    }
    let steps = std::mem::take(&mut run.in_flight);
    let values = match read_step_values(&steps).await {
        Ok(values) => values,
        Err(message) => {
            device_failed(run, message).await;
            return false;
        }
    };
    // The steps ran back to back on the device: each gets an equal share of the time.
    let seconds = (now_ms() - run.in_flight_since) / 1000.0 / steps.len() as f64;
    for (pending, (loss, correct)) in steps.iter().zip(values) {
        match run.session.finish_step(pending, loss, correct, seconds) {
            Ok(report) => {
                run.unsent.push(report.point);
                run.latest = Some(report);
            }
            Err(error @ TrainingError::NonFiniteLoss { .. }) => {
                flush_steps(run);
                stopped_by_nan(slot, error).await;
                return false;
            }
        }
    }
    true
}

/// Each step's loss and correct count, in one readback.
async fn read_step_values(steps: &[PendingStep]) -> Result<Vec<(f32, i64)>, String> {
    let losses = steps.iter().map(|step| step.loss.clone()); // n × [1]
    let correct = steps.iter().map(|step| step.correct.clone().float()); // n × [1]
    let values = Tensor::cat(losses.chain(correct).collect(), 0); // [2n]
    let values = read_floats(values, "losses and accuracies").await?;
    let n = steps.len();
    if values.len() != 2 * n {
        return Err(format!("{} values came back for {n} steps", values.len()));
    }
    Ok((0..n)
        .map(|i| (values[i], values[n + i].round() as i64))
        .collect())
}

/// Test accuracy on the plan's test subset; `None` before any test chunk arrived.
async fn evaluate(session: &mut Session) -> Result<Option<TestReport>, String> {
    let indices = session.evaluation_indices();
    if indices.is_empty() {
        return Ok(None);
    }
    let (model, device) = (session.inference_model(), session.device());
    let mut predicted = Vec::with_capacity(indices.len());
    for (_, batch) in classify_in_batches(&model, session.test_set(), &indices, EVAL_BATCH, &device)
    {
        predicted.extend(read_ints(batch, "predictions").await?);
        sleep_ms(0).await;
    }
    Ok(Some(session.finish_evaluation(&indices, &predicted)))
}

/// Saves the run so a reload (or a switch to the CPU) can resume it.
async fn save(run: &mut Run) {
    match saved_run::save_run(&run.session).await {
        Ok(step) => run.saved_step = Some(step),
        Err(message) => notice(format!("The run could not be saved: {message}"), true),
    }
}

fn fallback_hint(run: &Run) -> String {
    match run.saved_step {
        Some(step) => format!("The run saved at step {step} can be resumed."),
        None => "Nothing was saved yet.".to_string(),
    }
}

async fn device_failed(run: &mut Run, message: String) {
    let hint = fallback_hint(run);
    set_state(run, RunState::Failed);
    post(
        &FromTrainer::Failed {
            message: format!(
                "The {} device failed: {message}. {hint}",
                run.backend.label()
            ),
        },
        None,
    );
}

/// The step that made the loss non-finite has already updated the weights, so they are
/// useless: the run goes back to its last save, or is dropped when there is none.
async fn stopped_by_nan(slot: &mut Option<Run>, error: TrainingError) {
    let Some(run) = slot.as_mut() else { return };
    // Until this run has saved, what the browser holds is an earlier run's save.
    let saved = match run.saved_step {
        Some(_) => saved_run::load_run().await,
        None => Err("this run has not saved yet".into()),
    };
    let restored = match saved {
        Ok(saved) => {
            let step = saved.state.step;
            Session::resume(saved, &run.session.device())
                .ok()
                .map(|session| (session, step))
        }
        Err(_) => None,
    };
    match restored {
        Some((mut session, step)) => {
            // Keep the data already loaded.
            std::mem::swap(&mut session, &mut run.session);
            run.session.take_data_from(&mut session);
            run.saved_step = Some(step);
            run.unsent.clear();
            run.latest = None;
            // The page's charts go back to the save's history with the model.
            announce(run);
            set_state(run, RunState::Failed);
            post(
                &FromTrainer::Failed {
                    message: format!(
                        "{error} The model is back at the save from step {step}; Resume continues from there."
                    ),
                },
                None,
            );
        }
        None => {
            *slot = None;
            fail_without_run(format!(
                "{error} Nothing was saved before it, so the run is gone: start again."
            ));
        }
    }
}

async fn export(run: Option<&Run>, purpose: WeightsPurpose) {
    let Some(run) = run else {
        return notice("There is no model in training yet.", true);
    };
    let model = run.session.inference_model();
    match weights::to_safetensors_async(&model, &run.session.plan.config).await {
        Ok(bytes) => post(&FromTrainer::Weights { purpose }, Some(bytes)),
        Err(message) => notice(format!("Exporting the weights failed: {message}"), true),
    }
}

/// Offers the run as a checkpoint file, which `vit train --resume-from` continues.
async fn export_run(run: Option<&Run>) {
    let Some(run) = run else {
        return notice("There is no run to save yet.", true);
    };
    match run.session.checkpoint_async().await {
        Ok(checkpoint) => post(
            &FromTrainer::RunFile {
                step: checkpoint.state.step,
            },
            Some(checkpoint.encode()),
        ),
        Err(message) => notice(format!("Saving the run failed: {message}"), true),
    }
}
