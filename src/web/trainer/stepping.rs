//! The run's steps: taken several at a time and read back together, evaluations, saves, and
//! what happens when the device or the loss fails. Methods of the [`Runner`], which owns the
//! run: a loss that stops being finite can end the run.

use burn::tensor::Tensor;

use crate::analysis::inference::{self, images_of};
use crate::analysis::timeline::{AttentionSnapshot, PROBE_DIGITS};
use crate::model::Budget;
use crate::protocol::{FromTrainer, NonFinite, RunState, TrainerFailure};
use crate::train::{
    Checkpoint, PendingStep, Session, TestReport, TrainingError, classify_in_batches,
};

use crate::web::global::{now_ms, yield_to_messages};
use crate::web::read::{ReadError, read_floats_async, read_ints_async};

use super::run::Run;
use super::runner::Runner;
use super::to_page::{fail_without_run, post};

/// Step reports are batched to at most one message per this many milliseconds.
const REPORT_EVERY_MS: f64 = 100.0;
/// Steps read back together at most; on a GPU they run back to back meanwhile.
const READ_EVERY_STEPS: usize = 8;
/// Steps in flight are read back once the oldest began this long ago (on the CPU, whose steps
/// run as they are taken, that is every step or two).
const READ_EVERY_MS: f64 = 200.0;
const EVAL_BATCH: usize = 250;

/// A readback of the steps in flight that did not give what they are.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(super) enum StepValuesError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("{found} values came back for {steps} steps")]
    Count { found: usize, steps: usize },
}

impl Runner {
    /// Takes one step. Its loss and accuracy stay on the device until several steps are in
    /// flight (or the oldest began [`READ_EVERY_MS`] ago, or an evaluation or the end is due):
    /// then one readback brings them all, so the GPU never waits on the page between steps.
    pub(super) async fn train_step(&mut self) {
        let page_hidden = self.page_hidden;
        let Some(run) = self.run_mut() else { return };
        if run.in_flight.is_empty() {
            run.in_flight_since = now_ms();
        }
        let stepped = if run.helpers.is_empty() {
            run.session.begin_step()
        } else {
            run.session.begin_step_with(&run.helpers).await
        };
        let began = match stepped {
            Some(pending) => {
                let workers = pending.workers;
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
        let keep_now = run.keep_due(page_hidden);
        let read_now = !began
            || evaluate_now
            || keep_now
            || run.session.is_finished()
            || run.in_flight.len() >= READ_EVERY_STEPS
            || now_ms() - run.in_flight_since >= READ_EVERY_MS;
        if !read_now || !self.settle().await {
            return;
        }
        let Some(run) = self.run_mut() else { return };
        if evaluate_now || now_ms() - run.last_report_ms > REPORT_EVERY_MS {
            run.flush_steps();
        }
        if evaluate_now {
            match evaluate(&mut run.session).await {
                Ok(Some(report)) => post(&FromTrainer::Test(report), None),
                Ok(None) => {}
                Err(error) => return run.device_failed(error),
            }
            if let Err(error) = probe_attention(run).await {
                return run.device_failed(error);
            }
        }
        if run.session.is_finished() {
            run.flush_steps();
            run.rest(RunState::Finished).await;
        } else if evaluate_now || keep_now {
            run.save().await;
        }
    }

    /// Reads back every step in flight with one readback and books them in order. `false`
    /// when the run cannot go on (the device failed, or the loss stopped being finite).
    pub(super) async fn settle(&mut self) -> bool {
        let Some(run) = self.run_mut() else {
            return false;
        };
        if run.in_flight.is_empty() {
            return true;
        }
        let steps = std::mem::take(&mut run.in_flight);
        let values = match read_step_values(&steps).await {
            Ok(values) => values,
            Err(error) => {
                run.device_failed(error);
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
                    run.flush_steps();
                    self.stopped_by_nan(error).await;
                    return false;
                }
            }
        }
        true
    }

    /// The step that made the loss non-finite has already updated the weights, so they are
    /// useless: the run goes back to its last save, or is dropped when there is none.
    async fn stopped_by_nan(&mut self, error: TrainingError) {
        let Some(run) = self.run_mut() else { return };
        let TrainingError::NonFiniteLoss { step: at, loss } = error;
        let diverged = |back_to| TrainerFailure::Diverged {
            step: at,
            // The session stops on a loss that is not a number, and on nothing else.
            loss: NonFinite::of(loss).unwrap_or(NonFinite::NaN),
            back_to,
        };
        // Until this run has saved, there is nothing to go back to.
        let restored = match &run.last_checkpoint {
            Some(bytes) => match Checkpoint::decode(bytes, &Budget::PAGE) {
                Ok(saved) => {
                    let step = saved.state.step;
                    Session::resume(saved, &run.session.device())
                        .ok()
                        .map(|session| (session, step))
                }
                Err(_) => None,
            },
            None => None,
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
                run.announce();
                run.set_state(RunState::Failed);
                post(&FromTrainer::Failed(diverged(Some(step))), None);
            }
            None => {
                self.end();
                fail_without_run(diverged(None));
            }
        }
    }
}

/// Each step's loss and correct count, in one readback.
async fn read_step_values(steps: &[PendingStep]) -> Result<Vec<(f32, i64)>, StepValuesError> {
    let losses = steps.iter().map(|step| step.loss.clone()); // n × [1]
    let correct = steps.iter().map(|step| step.correct.clone().float()); // n × [1]
    let values = Tensor::cat(losses.chain(correct).collect(), 0); // [2n]
    let values = read_floats_async(values, "losses and accuracies").await?;
    let n = steps.len();
    if values.len() != 2 * n {
        return Err(StepValuesError::Count {
            found: values.len(),
            steps: n,
        });
    }
    Ok((0..n)
        .map(|i| (values[i], values[n + i].round() as i64))
        .collect())
}

/// Test accuracy on the plan's test subset; `None` before any test chunk arrived.
async fn evaluate(session: &mut Session) -> Result<Option<TestReport>, ReadError> {
    let indices = session.evaluation_indices();
    if indices.is_empty() {
        return Ok(None);
    }
    let (model, device) = (session.inference_model(), session.device());
    let mut predicted = Vec::with_capacity(indices.len());
    for (_, batch) in classify_in_batches(&model, session.test_set(), &indices, EVAL_BATCH, &device)
    {
        predicted.extend(read_ints_async(batch, "predictions").await?);
        yield_to_messages().await;
    }
    Ok(Some(session.finish_evaluation(&indices, &predicted)))
}

/// The probes' attention now (the first test digits and the drawing), for the timeline: one
/// small forward pass and one readback per evaluation.
async fn probe_attention(run: &Run) -> Result<(), ReadError> {
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
    let pending = inference::classify(&session.inference_model(), &probes, None, &session.device());
    let packed = read_floats_async(pending.packed, "the probes' attention").await?;
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
