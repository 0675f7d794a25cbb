//! The page's commands: start, resume, pause, stop, reset, export.

use std::pin::pin;
use std::rc::Rc;

use futures::future::{Either, select};

use wasm_bindgen_futures::spawn_local;

use burn::tensor::Device;

use crate::data::{Manifest, Split};
use crate::model::Budget;
use crate::protocol::{FromTrainer, RunState, ToTrainer, WeightsPurpose};
use crate::train::{Checkpoint, Session, TrainingPlan};
use crate::weights;

use crate::web::Backend;
use crate::web::chunks::{ChunkSource, DATA_BASE};
use crate::web::device_trial::training_device;
use crate::web::helper::HelperWorker;
use crate::web::saved_run;

use super::inbox::Inbox;
use super::loader::load_data;
use super::stepping::{Run, announce, flush_steps, save, settle};
use super::{notice, post, set_state};

pub(super) async fn handle(
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
                Session::new(plan, manifest.items(Split::Train), device).map_err(|e| e.to_string())
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
        ToTrainer::Drawing { image } => {
            if let Some(run) = run.as_mut() {
                // Anything but a 28×28 image (or none) is not a drawing.
                run.drawing = image.and_then(|image| image.try_into().ok());
            }
        }
        ToTrainer::CellDigits { label, predicted } => {
            match run
                .as_ref()
                .and_then(|r| r.session.cell_digits(label, predicted))
            {
                Some(cell) => post(&FromTrainer::CellDigits(cell), None),
                None => notice(
                    "The digits behind a cell come with the run's next evaluation.",
                    false,
                ),
            }
        }
    }
}

/// Tells the page why the helper stopped helping.
fn helper_stopped(why: String) {
    notice(
        format!(
            "The second CPU worker stopped ({why}): training goes on in one, with the same results."
        ),
        true,
    );
}

/// The run is gone, or never began: says why, and the page goes back to idle.
pub(super) fn fail_without_run(message: String) {
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
pub(super) async fn launch(
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
    // Started first, so that a timed choice times the CPU as it would train: in two workers
    // where the machine has two cores. Kept only if the run trains on the CPU.
    let helper = (*backend != Some(Backend::WebGpu))
        .then(|| HelperWorker::start(&plan.config, helper_stopped))
        .flatten();
    // The slow part (timing the devices, fetching the manifest: seconds, or a stall's 20 s)
    // gives way to a Stop or a Reset, which the loop then handles with no run begun.
    let prepare = async {
        let started = training_device(*backend, plan, helper.as_ref()).await;
        let source = ChunkSource::open(DATA_BASE).await;
        let manifest = source.manifest().await;
        (started, source, manifest)
    };
    let stop = inbox.stop_asked();
    let (started, source, manifest) = match select(pin!(prepare), pin!(stop)).await {
        Either::Left((prepared, _)) => prepared,
        Either::Right(_) => {
            notice("Stopped before training began; nothing was saved.", false);
            post(
                &FromTrainer::State {
                    state: RunState::Idle,
                },
                None,
            );
            return;
        }
    };
    let manifest = match manifest {
        Ok(manifest) => manifest,
        Err(message) => return fail_without_run(message),
    };
    let session = match build(&manifest, &started.device) {
        Ok(session) => session,
        Err(message) => return fail_without_run(message),
    };
    inbox.generation.set(inbox.generation.get() + 1);
    inbox.chunks.borrow_mut().clear();
    let helper = helper.filter(|_| started.backend == Backend::Cpu);
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
        drawing: None,
        helper,
        workers: 1,
    };
    announce(&new_run);
    set_state(&mut new_run, RunState::Running);
    *run = Some(new_run);
    spawn_local(load_data(source, manifest, inbox.clone()));
}

pub(super) async fn export(run: Option<&Run>, purpose: WeightsPurpose) {
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
pub(super) async fn export_run(run: Option<&Run>) {
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
