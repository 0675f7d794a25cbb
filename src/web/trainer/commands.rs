//! The page's commands: start, resume, pause, stop, reset, export.

use std::pin::pin;
use std::rc::Rc;

use futures::future::{Either, select};

use wasm_bindgen_futures::spawn_local;

use burn::tensor::Device;

use crate::data::{Manifest, Split};
use crate::model::Budget;
use crate::protocol::{FromTrainer, RunState, ToTrainer, TrainerFailure, WeightsPurpose};
use crate::train::{Checkpoint, PlanError, SavedRunError, Session, TrainingPlan};
use crate::weights;

use crate::protocol::BackendKind;
use crate::web::chunks::{ChunkSource, DATA_BASE};
use crate::web::device_trial::training_device;
use crate::web::helper::{HelperError, HelperWorker, cpu_workers_here};

use super::inbox::Inbox;
use super::loader::load_data;
use super::run::Run;
use super::runner::Runner;
use super::to_page::{fail_without_run, notice, post};

/// Why the session of a run to start or resume could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum SessionError {
    #[error(transparent)]
    New(PlanError),
    #[error("the saved run: {0}")]
    Saved(SavedRunError),
    #[error("the weights to start from: {0}")]
    Start(String),
}

pub(super) async fn handle(
    message: ToTrainer,
    bytes: Option<Vec<u8>>,
    runner: &mut Runner,
    inbox: &Rc<Inbox>,
) {
    match message {
        ToTrainer::Start { plan, backend, run } => {
            // A run of its own: a start that fails (offline, a bad manifest, a lost device)
            // leaves its record as it is. Weights beside the message are its start
            // (fine-tuning); a mix of a person's digits never starts from nothing.
            if plan.mix.is_some() && bytes.is_none() {
                return fail_without_run(TrainerFailure::FineTuningUnsaved);
            }
            let trial = plan.clone();
            launch(
                runner,
                inbox,
                (run, &backend),
                &trial,
                None,
                |manifest, device| {
                    let items = manifest.items(Split::Train);
                    let Some(bytes) = bytes else {
                        return Session::new(plan, items, device).map_err(SessionError::New);
                    };
                    let (model, config) = weights::load(&bytes, device)
                        .map_err(|error| SessionError::Start(error.to_string()))?;
                    if config != plan.config {
                        return Err(SessionError::Start(
                            "they are not the plan's model".to_string(),
                        ));
                    }
                    plan.validate().map_err(SessionError::New)?;
                    Session::from_model(plan, items, model, device).map_err(SessionError::New)
                },
            )
            .await;
        }
        ToTrainer::Continue { backend, run } => {
            let Some(bytes) = bytes else {
                return fail_without_run(TrainerFailure::NoCheckpoint);
            };
            let checkpoint = match Checkpoint::decode(&bytes, &Budget::PAGE) {
                Ok(checkpoint) => checkpoint,
                Err(error) => {
                    return fail_without_run(TrainerFailure::Unresumable(error.to_string()));
                }
            };
            let step = checkpoint.state.step;
            let trial = checkpoint.state.plan.clone();
            launch(
                runner,
                inbox,
                (run, &backend),
                &trial,
                Some((step, bytes)),
                |_, device| Session::resume(checkpoint, device).map_err(SessionError::Saved),
            )
            .await;
        }
        ToTrainer::Pause => {
            if runner.run_in(RunState::Running).is_some() && !runner.settle().await {
                return;
            }
            if let Some(run) = runner.run_in(RunState::Running) {
                run.flush_steps();
                run.rest(RunState::Paused).await;
            }
        }
        ToTrainer::PageHidden { hidden } => {
            runner.page_hidden = hidden;
            // Kept at once: a hidden page may be ended without another word.
            if hidden
                && runner.run_in(RunState::Running).is_some()
                && runner.settle().await
                && let Some(run) = runner.run_in(RunState::Running)
            {
                run.flush_steps();
                run.save().await;
            }
        }
        ToTrainer::Resume => {
            if let Some(run) = runner.run_mut().filter(|r| {
                matches!(
                    r.state,
                    RunState::Paused | RunState::Stopped | RunState::Failed
                ) && !r.session.is_finished()
            }) {
                run.set_state(RunState::Running);
            }
        }
        ToTrainer::Stop => {
            if runner.run_in(RunState::Running).is_some() && !runner.settle().await {
                return;
            }
            if let Some(run) = runner
                .run_mut()
                .filter(|r| r.state == RunState::Running || r.state == RunState::Paused)
            {
                run.flush_steps();
                run.rest(RunState::Stopped).await;
            }
        }
        ToTrainer::Reset => {
            runner.end();
            inbox.generation.set(inbox.generation.get() + 1);
            inbox.chunks.borrow_mut().clear();
            post(
                &FromTrainer::State {
                    state: RunState::Idle,
                },
                None,
            );
        }
        ToTrainer::ExportWeights { purpose } => export(runner.run(), purpose).await,
        ToTrainer::ExportRun => export_run(runner.run()).await,
        ToTrainer::Drawing { image } => {
            if let Some(run) = runner.run_mut() {
                // Anything but a 28×28 image (or none) is not a drawing.
                run.drawing = image.and_then(|image| image.try_into().ok());
            }
        }
        ToTrainer::CellDigits { label, predicted } => {
            match runner
                .run()
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

/// Tells the page why a helper stopped helping.
fn helper_stopped(why: HelperError) {
    notice(
        format!(
            "A helper CPU worker stopped ({why}): training goes on without it, with the same results."
        ),
        true,
    );
}

/// Starts run `id`: the device (timed against the other for `plan` when none is asked for),
/// the manifest, the session `build` makes on them, then the data. `saved` is the checkpoint
/// the session was restored from, with its step, if it was.
async fn launch(
    runner: &mut Runner,
    inbox: &Rc<Inbox>,
    (id, backend): (u64, &Option<BackendKind>),
    plan: &TrainingPlan,
    saved: Option<(usize, Vec<u8>)>,
    build: impl FnOnce(&Manifest, &Device) -> Result<Session, SessionError>,
) {
    runner.end();
    post(
        &FromTrainer::State {
            state: RunState::Starting,
        },
        None,
    );
    // Started first, so that a timed choice times the CPU as it would train: in a worker per
    // core. Kept only if the run trains on the CPU.
    let helpers = if *backend == Some(BackendKind::WebGpu) {
        Vec::new()
    } else {
        let count = cpu_workers_here().helpers_for(plan.batch_size);
        HelperWorker::start_many(&plan.config, count, helper_stopped)
    };
    // The slow part (timing the devices, fetching the manifest: seconds, or a stall's 20 s)
    // gives way to a Stop or a Reset, which the loop then handles with no run begun.
    let prepare = async {
        let started = training_device(*backend, plan, &helpers).await;
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
        Err(error) => return fail_without_run(TrainerFailure::NoManifest(error.to_string())),
    };
    let session = match build(&manifest, &started.device) {
        Ok(session) => session,
        Err(error) => return fail_without_run(TrainerFailure::NotMade(error.to_string())),
    };
    inbox.generation.set(inbox.generation.get() + 1);
    inbox.chunks.borrow_mut().clear();
    let helpers = if started.backend == BackendKind::Cpu {
        helpers
    } else {
        Vec::new()
    };
    let mut new_run = Run {
        id,
        session,
        backend: started.backend,
        state: RunState::Starting,
        device_note: started.fallback_reason,
        in_flight: Vec::new(),
        in_flight_since: 0.0,
        unsent: Vec::new(),
        latest: None,
        last_report_ms: 0.0,
        saved_step: saved.as_ref().map(|(step, _)| *step),
        last_checkpoint: saved.map(|(_, bytes)| bytes),
        last_kept_ms: crate::web::global::now_ms(),
        drawing: None,
        helpers,
        workers: 1,
    };
    new_run.announce();
    // A run from given weights is kept before its first step: a reload continues it from
    // them, never from a fresh model.
    if new_run.saved_step.is_none() && new_run.session.plan.mix.is_some() {
        new_run.save().await;
    }
    new_run.set_state(RunState::Running);
    runner.begin(new_run);
    spawn_local(load_data(source, manifest, inbox.clone()));
}

async fn export(run: Option<&Run>, purpose: WeightsPurpose) {
    let Some(run) = run else {
        return notice("There is no model in training yet.", true);
    };
    let model = run.session.inference_model();
    match weights::to_safetensors_async(&model, &run.session.plan.config).await {
        Ok(bytes) => post(&FromTrainer::Weights { purpose }, Some(bytes)),
        Err(error) => notice(format!("Exporting the weights failed: {error}"), true),
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
        Err(error) => notice(format!("Saving the run failed: {error}"), true),
    }
}
