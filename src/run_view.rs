//! What the training panel shows of a run, as plain data: every message from the trainer is
//! one call of [`RunView::apply`], which changes the view and says what else must happen
//! (weights to hand over, a file to offer). Pure, so it is tested natively; the page holds
//! it in a Leptos store.

use crate::analysis::timeline::Timeline;
use crate::protocol::{
    BackendKind, DataProgress, DeviceNote, FromTrainer, RunState, SavedSummary, TrainerFailure,
    WeightsPurpose,
};
use crate::run_record::Progress;
use crate::run_store::{HeaderError, KeeperError, RunId, StartRefused, StoreError, short_name};
use crate::train::{
    CellDigits, History, PersonalMix, PlanError, StepReport, TestReport, TrainingPlan,
};

/// Notices kept on screen, newest last.
pub const MAX_NOTICES: usize = 4;

/// A notice: what happened, and whether it is a warning.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub message: String,
    pub warning: bool,
}

/// Everything the panel shows of a run.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(
    all(target_arch = "wasm32", feature = "ui"),
    derive(reactive_stores::Store)
)]
pub struct RunView {
    pub state: RunState,
    pub backend: Option<BackendKind>,
    /// Why the device is not the one asked for, if it is not.
    pub device_note: Option<DeviceNote>,
    /// Workers computing the steps: 2 while the training worker's helper takes half of each
    /// CPU step, else 1 (0 before any run).
    pub workers: usize,
    pub data: DataProgress,
    /// A few digits of the first chunk, with their labels.
    pub samples: Vec<(Vec<u8>, u8)>,
    pub history: History,
    pub report: Option<StepReport>,
    pub test: Option<TestReport>,
    /// The digits of the confusion-matrix cell last asked for.
    pub cell: Option<CellDigits>,
    /// The probes' attention at each evaluation.
    pub timeline: Timeline,
    pub notices: Vec<Notice>,
    /// Why the run stopped, or did not start or go on.
    pub failure: Option<RunFailure>,
    /// The run saved in this browser, or why it cannot be resumed.
    pub saved: Option<Result<SavedSummary, SavedProblem>>,
    /// The person's digits the run fine-tunes on, if it does (its plan is not the form's).
    pub fine_tunes_on: Option<usize>,
}

/// Why the panel's run stopped, or did not start or go on: typed until the panel says it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunFailure {
    /// The worker's own failure: its device, a loss gone NaN, a start it could not make.
    #[error(transparent)]
    Trainer(TrainerFailure),
    /// The worker itself is gone.
    #[error(
        "The training worker stopped: {0}. Continue from the last save, on the CPU if the GPU was lost."
    )]
    WorkerLost(WorkerLoss),
    #[error("This plan cannot run: {0}")]
    Plan(PlanError),
    #[error(transparent)]
    NotStarted(StartRefused),
    #[error("Not continued: {0}.")]
    NotContinued(KeeperError),
    /// Another tab continued the run and kept it since: this tab's copy stopped.
    #[error("{}", taken_on(.0))]
    TakenOn(StoreError),
    /// A fine-tuning without a checkpoint cannot go on as itself: the weights it began from
    /// and the person's digits are in its checkpoint.
    #[error(
        "Run {} fine-tuned on your digits and has no checkpoint to go on from: start it again from Handwriting.",
        short_name(*.0)
    )]
    NoCheckpoint(RunId),
}

/// How a worker was lost, in the browser's words (an error event's message, a refused start),
/// which are all the page is told.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkerLoss {
    #[error("{0}")]
    Died(String),
    #[error("it could not be started ({0})")]
    NotStarted(String),
}

/// Another tab took the run on, as a sentence of its own.
pub fn taken_on(error: &StoreError) -> String {
    let said = KeeperError::Store(error.clone()).to_string();
    let mut chars = said.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}

/// Why the run saved in this browser is not offered to resume.
#[derive(Debug, Clone, PartialEq)]
pub enum SavedProblem {
    /// The database could not be read now (a transient failure): the run may be fine, and
    /// nothing is offered that would delete it.
    Unreadable(StoreError),
    /// Its checkpoint cannot be resumed (a damaged or foreign header), as read at `revision`
    /// of its record: it may be discarded, unless the run has moved on since.
    Damaged { why: HeaderError, revision: u64 },
}

/// What a message asks of the page beyond its view: each message is read once, here.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEffect {
    None,
    /// A run began (or went on) with this plan: the worker wants the drawing, the record its
    /// plan.
    Started {
        plan: TrainingPlan,
    },
    /// The run changed state: its record follows. (An evaluation's figures reach the record
    /// with the checkpoint the worker sends right after them.)
    Moved,
    /// Weights for the draw panel, with where they came from.
    UseWeights {
        bytes: Vec<u8>,
        source: String,
    },
    /// Run `run` came to `rest` without a checkpoint (the worker could not make one): it rests
    /// where its last keeping left it.
    RestedUnsaved {
        run: u64,
        rest: RunState,
    },
    /// A file to offer as a download.
    Download {
        bytes: Vec<u8>,
        name: String,
    },
    /// The saved run may have changed: read its summary again.
    RefreshSaved,
    /// Run `run`'s checkpoint at `step` to keep (with its weights when it came to rest);
    /// the run shows `rest` once it is kept.
    Keep {
        run: u64,
        step: usize,
        rest: Option<RunState>,
        checkpoint: Vec<u8>,
        weights: Option<Vec<u8>>,
    },
}

impl RunView {
    /// Books one message from the trainer (with the bytes that came beside it).
    pub fn apply(&mut self, message: FromTrainer, bytes: Option<Vec<u8>>) -> RunEffect {
        match message {
            FromTrainer::Listening { .. } => {}
            FromTrainer::Started {
                backend,
                note,
                plan,
                history,
            } => {
                self.backend = Some(backend);
                self.device_note = note;
                self.workers = 1;
                self.history = history;
                // Also sent after a NaN rolled the run back: the last report is not its state.
                self.report = None;
                self.fine_tunes_on = plan.mix.as_deref().map(PersonalMix::digits);
                return RunEffect::Started { plan };
            }
            FromTrainer::State { state } => {
                self.state = state;
                // Idle and Starting say nothing of a run's figures (a reset, a start).
                if !matches!(state, RunState::Idle | RunState::Starting) {
                    return RunEffect::Moved;
                }
            }
            FromTrainer::Workers { count } => self.workers = count,
            FromTrainer::Data(progress) => self.data = progress,
            FromTrainer::Samples { images, labels } => {
                self.samples = images.into_iter().zip(labels).collect()
            }
            FromTrainer::Notice { message, warning } => self.notice(message, warning),
            FromTrainer::Steps { points, report } => {
                points.into_iter().for_each(|p| self.history.push_step(p));
                self.report = Some(report);
            }
            FromTrainer::Test(report) => {
                self.history.push_eval(report.point);
                self.test = Some(report);
            }
            FromTrainer::CellDigits(cell) => self.cell = Some(cell),
            FromTrainer::Attention {
                grid,
                patch_size,
                probes,
                snapshot,
            } => self.timeline.push((grid, patch_size), probes, snapshot),
            FromTrainer::Weights { purpose } => {
                let Some(bytes) = bytes else {
                    return RunEffect::None;
                };
                // The history, not the last report: after a NaN the model went back to a save.
                let step = self.history.steps.last().map_or(0, |p| p.step);
                return match purpose {
                    WeightsPurpose::Use => RunEffect::UseWeights {
                        bytes,
                        source: format!("training run, step {step}"),
                    },
                    WeightsPurpose::Download => RunEffect::Download {
                        bytes,
                        name: format!("vitlab-step-{step}.safetensors"),
                    },
                };
            }
            FromTrainer::Checkpoint {
                run,
                step,
                rest,
                weights_at,
            } => {
                let Some(mut checkpoint) = bytes else {
                    return RunEffect::None;
                };
                // Bytes from a worker, checked: weights past the end are no weights.
                let weights = match weights_at {
                    Some(at) if at <= checkpoint.len() => Some(checkpoint.split_off(at)),
                    _ => None,
                };
                return RunEffect::Keep {
                    run,
                    step,
                    rest,
                    checkpoint,
                    weights,
                };
            }
            FromTrainer::RestUnsaved { run, state } => {
                self.state = state;
                return RunEffect::RestedUnsaved { run, rest: state };
            }
            FromTrainer::RunFile { step } => {
                if let Some(bytes) = bytes {
                    return RunEffect::Download {
                        bytes,
                        name: format!("vitlab-run-step-{step}.ckpt"),
                    };
                }
            }
            FromTrainer::Failed(failure) => self.failure = Some(RunFailure::Trainer(failure)),
        }
        RunEffect::None
    }

    /// How far the run got, for its record.
    pub fn progress(&self) -> Progress<'_> {
        Progress {
            backend: self.backend,
            report: self.report.as_ref(),
            history: &self.history,
            timeline: &self.timeline,
        }
    }

    /// The worker died: nothing it held can answer any more.
    pub fn worker_lost(&mut self, how: WorkerLoss) -> RunEffect {
        self.state = RunState::Failed;
        self.failure = Some(RunFailure::WorkerLost(how));
        RunEffect::RefreshSaved
    }

    /// A new start: the figures of the last run go.
    pub fn clear(&mut self) {
        self.history = History::default();
        self.report = None;
        self.test = None;
        self.cell = None;
        self.timeline = Timeline::default();
        self.failure = None;
        self.notices.clear();
        self.fine_tunes_on = None;
    }

    /// Forgets the run altogether (Reset).
    pub fn reset(&mut self) {
        self.clear();
        self.saved = None;
        self.samples.clear();
        self.data = DataProgress::default();
    }

    pub fn notice(&mut self, message: String, warning: bool) {
        self.notices.push(Notice { message, warning });
        if self.notices.len() > MAX_NOTICES {
            self.notices.remove(0);
        }
    }
}
