//! The run in progress: its session and device, what the page has been told of it, and what
//! it tells the page (its state, its steps, its failure).

use std::fmt::Display;

use crate::data::IMAGE_PIXELS;
use crate::protocol::{DeviceNote, FromTrainer, RunState, TrainerFailure};
use crate::train::{PendingStep, Session, StepPoint, StepReport};

use crate::protocol::BackendKind;
use crate::web::global::now_ms;
use crate::web::helper::HelperWorker;
use crate::weights;

use super::to_page::{notice, post};

/// The run in progress.
pub(super) struct Run {
    /// Its record in the runs table, under which its checkpoint is kept.
    pub(super) id: u64,
    pub(super) session: Session,
    pub(super) backend: BackendKind,
    pub(super) state: RunState,
    /// Why the device is not the one asked for, if it is not.
    pub(super) device_note: Option<DeviceNote>,
    /// Steps taken whose loss and accuracy have not been read back yet, oldest first.
    pub(super) in_flight: Vec<PendingStep>,
    /// When the oldest of them began.
    pub(super) in_flight_since: f64,
    pub(super) unsent: Vec<StepPoint>,
    /// The newest step's report, sent with the next batch of points.
    pub(super) latest: Option<StepReport>,
    pub(super) last_report_ms: f64,
    /// Step of the last checkpoint sent to be kept, to say what a failure falls back to.
    pub(super) saved_step: Option<usize>,
    /// That checkpoint, which a loss gone non-finite rolls the run back to.
    pub(super) last_checkpoint: Option<Vec<u8>>,
    /// When a checkpoint was last sent to be kept (or the run began).
    pub(super) last_kept_ms: f64,
    /// The drawing on the page's pad, probed with the test digits at each evaluation.
    pub(super) drawing: Option<[u8; IMAGE_PIXELS]>,
    /// The workers that compute some of the shards of each CPU step, where there are any.
    pub(super) helpers: Vec<HelperWorker>,
    /// Workers computing the steps, as the page was last told.
    pub(super) workers: usize,
}

impl Run {
    /// Tells the page the run's device, plan and history (the charts start from it).
    pub(super) fn announce(&self) {
        post(
            &FromTrainer::Started {
                backend: self.backend,
                note: self.device_note.clone(),
                plan: self.session.plan.clone(),
                history: self.session.history.clone(),
            },
            None,
        );
    }

    pub(super) fn set_state(&mut self, state: RunState) {
        self.state = state;
        post(&FromTrainer::State { state }, None);
    }

    /// Sends the steps not yet reported.
    pub(super) fn flush_steps(&mut self) {
        if self.unsent.is_empty() {
            return;
        }
        let Some(report) = self.latest.clone() else {
            return;
        };
        post(
            &FromTrainer::Steps {
                points: std::mem::take(&mut self.unsent),
                report,
            },
            None,
        );
        self.last_report_ms = now_ms();
    }

    /// Sends the run's checkpoint for the page to keep (in the browser's database, where a
    /// reload, a switch to the CPU or the runs table continue it).
    pub(super) async fn save(&mut self) {
        self.keep(None).await;
    }

    /// Whether the run is due to be kept between evaluations: its page is hidden, and may be
    /// ended without a word.
    pub(super) fn keep_due(&self, page_hidden: bool) -> bool {
        page_hidden && now_ms() - self.last_kept_ms >= crate::protocol::KEEP_WHILE_HIDDEN_MS
    }

    /// The run comes to rest in `state` (paused, stopped, finished): its checkpoint and its
    /// weights go to the page together, and the page shows `state` once they are kept.
    pub(super) async fn rest(&mut self, state: RunState) {
        self.state = state;
        self.keep(Some(state)).await;
    }

    async fn keep(&mut self, rest: Option<RunState>) {
        let checkpoint = match self.session.checkpoint_async().await {
            Ok(checkpoint) => checkpoint,
            Err(error) => {
                notice(format!("The run could not be saved: {error}"), true);
                if let Some(state) = rest {
                    post(
                        &FromTrainer::RestUnsaved {
                            run: self.id,
                            state,
                        },
                        None,
                    );
                }
                return;
            }
        };
        let step = checkpoint.state.step;
        let mut bytes = checkpoint.encode();
        self.saved_step = Some(step);
        self.last_checkpoint = Some(bytes.clone());
        self.last_kept_ms = now_ms();
        let mut weights_at = None;
        if rest.is_some() {
            let model = self.session.inference_model();
            match weights::to_safetensors_async(&model, &self.session.plan.config).await {
                Ok(weights) => {
                    weights_at = Some(bytes.len());
                    bytes.extend_from_slice(&weights);
                }
                Err(error) => notice(format!("Exporting the weights failed: {error}"), true),
            }
        }
        post(
            &FromTrainer::Checkpoint {
                run: self.id,
                step,
                rest,
                weights_at,
            },
            Some(bytes),
        );
    }

    /// The device failed (`why`): the run stops, and the page hears what it can go back to.
    pub(super) fn device_failed(&mut self, why: impl Display) {
        self.set_state(RunState::Failed);
        let failure = TrainerFailure::Device {
            backend: self.backend,
            why: why.to_string(),
            saved: self.saved_step,
        };
        post(&FromTrainer::Failed(failure), None);
    }
}
