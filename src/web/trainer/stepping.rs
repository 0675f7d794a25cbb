//! The run in progress: steps taken several at a time and read back together, evaluations,
//! saves, and what happens when the device or the loss fails.

use burn::tensor::Tensor;

use crate::analysis::inference::{self, images_of};
use crate::analysis::timeline::{AttentionSnapshot, PROBE_DIGITS};
use crate::data::IMAGE_PIXELS;
use crate::protocol::{FromTrainer, RunState};
use crate::train::{
    PendingStep, Session, StepPoint, StepReport, TestReport, TrainingError, classify_in_batches,
};

use crate::web::Backend;
use crate::web::global::{now_ms, sleep_ms};
use crate::web::helper::HelperWorker;
use crate::web::read::{read_floats, read_ints};
use crate::web::saved_run;

use super::commands::fail_without_run;
use super::{
    EVAL_BATCH, READ_EVERY_MS, READ_EVERY_STEPS, REPORT_EVERY_MS, notice, post, set_state,
};

/// The run in progress.
pub(super) struct Run {
    pub(super) session: Session,
    pub(super) backend: Backend,
    pub(super) state: RunState,
    /// Why the device is not the one asked for, if it is not.
    pub(super) device_note: Option<String>,
    /// Steps taken whose loss and accuracy have not been read back yet, oldest first.
    pub(super) in_flight: Vec<PendingStep>,
    /// When the oldest of them began.
    pub(super) in_flight_since: f64,
    pub(super) unsent: Vec<StepPoint>,
    /// The newest step's report, sent with the next batch of points.
    pub(super) latest: Option<StepReport>,
    pub(super) last_report_ms: f64,
    /// Step of the last save, to say what a failure falls back to.
    pub(super) saved_step: Option<usize>,
    /// The drawing on the page's pad, probed with the test digits at each evaluation.
    pub(super) drawing: Option<[u8; IMAGE_PIXELS]>,
    /// The worker that computes the second half of each CPU step, where there is one.
    pub(super) helper: Option<HelperWorker>,
    /// Workers computing the steps, as the page was last told.
    pub(super) workers: usize,
}

/// Tells the page the run's device, plan and history (the charts start from it).
pub(super) fn announce(run: &Run) {
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
pub(super) fn flush_steps(run: &mut Run) {
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
pub(super) async fn train_step(slot: &mut Option<Run>) {
    let Some(run) = slot.as_mut() else { return };
    if run.in_flight.is_empty() {
        run.in_flight_since = now_ms();
    }
    let stepped = match &run.helper {
        Some(helper) => run.session.begin_step_with(helper).await,
        None => run.session.begin_step(),
    };
    let began = match stepped {
        Some(pending) => {
            let workers = if pending.helped { 2 } else { 1 };
            if workers != run.workers {
                run.workers = workers;
                post(&FromTrainer::Workers { count: workers }, None);
            }
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
        if let Err(message) = probe_attention(run).await {
            return device_failed(run, message).await;
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
pub(super) async fn settle(slot: &mut Option<Run>) -> bool {
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
pub(super) async fn read_step_values(steps: &[PendingStep]) -> Result<Vec<(f32, i64)>, String> {
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
pub(super) async fn evaluate(session: &mut Session) -> Result<Option<TestReport>, String> {
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

/// The probes' attention now (the first test digits and the drawing), for the timeline: one
/// small forward pass and one readback per evaluation.
async fn probe_attention(run: &Run) -> Result<(), String> {
    let session = &run.session;
    let mut probes = images_of(session.test_set(), PROBE_DIGITS);
    let tests = probes.len();
    probes.extend(run.drawing);
    if probes.is_empty() {
        return Ok(());
    }
    // A CNN has no attention to follow.
    let Some(config) = session.plan.config.vit() else {
        return Ok(());
    };
    let pending = inference::classify(&session.inference_model(), &probes, &session.device());
    let packed = read_floats(pending.packed, "the probes' attention").await?;
    let mut snapshot = AttentionSnapshot::of_packed(&packed, probes.len(), config, session.step());
    snapshot.drawing = run.drawing.map(|d| d.to_vec());
    let message = FromTrainer::Attention {
        grid: config.grid_size(),
        patch_size: config.patch_size,
        probes: probes[..tests].iter().map(|p| p.to_vec()).collect(),
        snapshot,
    };
    post(&message, None);
    Ok(())
}

/// Saves the run so a reload (or a switch to the CPU) can resume it.
pub(super) async fn save(run: &mut Run) {
    match saved_run::save_run(&run.session).await {
        Ok(step) => run.saved_step = Some(step),
        Err(message) => notice(format!("The run could not be saved: {message}"), true),
    }
}

pub(super) fn fallback_hint(run: &Run) -> String {
    match run.saved_step {
        Some(step) => format!("The run saved at step {step} can be resumed."),
        None => "Nothing was saved yet.".to_string(),
    }
}

pub(super) async fn device_failed(run: &mut Run, message: String) {
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
pub(super) async fn stopped_by_nan(slot: &mut Option<Run>, error: TrainingError) {
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
