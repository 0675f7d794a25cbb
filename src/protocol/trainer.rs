//! What the page and the training worker say to each other: plain data with typed values,
//! sent as JSON, with bytes (weights, a run file) travelling beside the message rather than
//! inside it.

use serde::{Deserialize, Serialize};

use crate::analysis::timeline::AttentionSnapshot;
use crate::train::{CellDigits, History, StepPoint, StepReport, TestReport, TrainingPlan};

/// Where the browser computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BackendKind {
    WebGpu,
    Cpu,
}

impl BackendKind {
    /// Reads `?backend=cpu` / `?backend=webgpu`.
    pub fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "cpu" => Some(Self::Cpu),
            "webgpu" | "gpu" | "wgpu" => Some(Self::WebGpu),
            _ => None,
        }
    }

    /// As `?backend=` names it.
    pub fn param(self) -> &'static str {
        match self {
            Self::WebGpu => "webgpu",
            Self::Cpu => "cpu",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::WebGpu => "WebGPU",
            Self::Cpu => "CPU (wasm)",
        }
    }
}

/// The page to the worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToTrainer {
    /// A new run, kept as `run` (its record in the runs table, made by the page before this
    /// is sent). No `backend` is WebGPU-if-possible.
    Start {
        plan: TrainingPlan,
        backend: Option<BackendKind>,
        run: u64,
    },
    /// Continue the run in the checkpoint that travels beside the message (kept in this
    /// browser, or a file saved by the page or by `vit train`), kept from now on as `run`.
    Continue {
        backend: Option<BackendKind>,
        run: u64,
    },
    Pause,
    Resume,
    /// Stop and save, as Pause does, but the run is marked stopped (Resume or a reload
    /// continues it).
    Stop,
    /// Let the run go: its last checkpoint stays with its record, to be continued from there.
    Reset,
    /// Send the weights as they are now, as safetensors.
    ExportWeights {
        purpose: WeightsPurpose,
    },
    /// Send the run as a checkpoint file (weights, optimiser moments, state).
    ExportRun,
    /// The drawing on the pad (none when it is empty), probed with the test digits at each
    /// evaluation.
    Drawing {
        image: Option<Vec<u8>>,
    },
    /// Send the test digits of one cell of the last evaluation's confusion matrix.
    CellDigits {
        label: u8,
        predicted: u8,
    },
    /// The page was hidden (the person switched tabs or apps, or is leaving: a hidden page may
    /// be ended without another word) or shown again. While it is hidden the run is kept at
    /// once and then every [`KEEP_WHILE_HIDDEN_MS`] of training, not only at evaluations.
    PageHidden {
        hidden: bool,
    },
}

/// How often a run is kept while its page is hidden, in milliseconds of training: the most a
/// hidden page that is then ended loses.
pub const KEEP_WHILE_HIDDEN_MS: f64 = 20_000.0;

/// What the page will do with exported weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WeightsPurpose {
    /// Put them into the draw panel.
    Use,
    /// Offer them as a file.
    Download,
}

/// Where a run stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunState {
    #[default]
    Idle,
    /// Started, waiting for the device or the first chunk.
    Starting,
    Running,
    Paused,
    Stopped,
    Finished,
    Failed,
}

impl RunState {
    pub fn label(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Starting => "starting",
            Self::Running => "training",
            Self::Paused => "paused",
            Self::Stopped => "stopped",
            Self::Finished => "finished",
            Self::Failed => "failed",
        }
    }

    /// A model exists that can be exported or continued.
    pub fn has_model(self) -> bool {
        matches!(
            self,
            Self::Running | Self::Paused | Self::Stopped | Self::Finished | Self::Failed
        )
    }
}

/// Download progress of the data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DataProgress {
    pub chunks: usize,
    pub total_chunks: usize,
    pub bytes: usize,
    pub total_bytes: usize,
    pub images: usize,
    pub total_images: usize,
    /// Chunks answered from Cache Storage instead of the network.
    pub cached_chunks: usize,
}

impl DataProgress {
    /// 0..1, by bytes.
    pub fn fraction(&self) -> f64 {
        if self.total_bytes == 0 {
            0.0
        } else {
            (self.bytes as f64 / self.total_bytes as f64).min(1.0)
        }
    }
}

/// The worker to the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FromTrainer {
    /// The worker listens: messages sent before this would have been lost.
    Listening {
        /// The build the worker is of ([`super::BUILD`]).
        build: String,
    },
    /// The device is up and the model built; `history` is not empty when a run resumed.
    Started {
        backend: BackendKind,
        note: Option<DeviceNote>,
        plan: TrainingPlan,
        history: History,
    },
    State {
        state: RunState,
    },
    /// The run's steps are now computed by `count` workers: the training worker and the
    /// helpers that take shards of each CPU step (fewer again if one stops).
    Workers {
        count: usize,
    },
    Data(DataProgress),
    /// A few digits from the first chunk, to show what was loaded.
    Samples {
        images: Vec<Vec<u8>>,
        labels: Vec<u8>,
    },
    /// Worth telling: a retried chunk, the state saved; a `warning` (a chunk given up on)
    /// does not stop training either.
    Notice {
        message: String,
        warning: bool,
    },
    /// Steps since the last message (the worker sends at most ~10 a second) and the latest.
    Steps {
        points: Vec<StepPoint>,
        report: StepReport,
    },
    Test(TestReport),
    /// Answer to [`ToTrainer::CellDigits`].
    CellDigits(CellDigits),
    /// The probes' attention at an evaluation, for the timeline.
    Attention {
        grid: usize,
        patch_size: usize,
        probes: Vec<Vec<u8>>,
        snapshot: AttentionSnapshot,
    },
    /// Safetensors bytes travel beside this message.
    Weights {
        purpose: WeightsPurpose,
    },
    /// Run `run`'s checkpoint at `step` travels beside this message for the page to keep
    /// (at each evaluation, and when the run comes to rest), followed from byte `weights_at`
    /// by its weights as a weights file when it came to rest. `rest` is the state it came to
    /// (paused, stopped, finished): the page shows it once the checkpoint is kept.
    Checkpoint {
        run: u64,
        step: usize,
        rest: Option<RunState>,
        weights_at: Option<usize>,
    },
    /// Run `run` came to `state` (paused, stopped, finished) but its checkpoint could not be
    /// made (a notice said why): it rests where its last checkpoint left it.
    RestUnsaved {
        run: u64,
        state: RunState,
    },
    /// A checkpoint of the run at `step` travels beside this message.
    RunFile {
        step: usize,
    },
    /// Training cannot go on (the model before the failure is kept), or never began.
    Failed(TrainerFailure),
}

/// Why the training worker's run cannot go on, or never began: typed across the worker
/// boundary and put in words only where the panel shows it. Only what a cause outside the
/// worker's code says (a device's error, a fetch's) travels as its own words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
pub enum TrainerFailure {
    /// The device failed mid-run, as it says (`why`); the run saved at step `saved`, if it
    /// did, can be resumed.
    #[error("The {} device failed: {why}. {}", .backend.label(), resume_hint(*.saved))]
    Device {
        backend: BackendKind,
        why: String,
        saved: Option<usize>,
    },
    /// The loss became `loss` at step `step`: the model went back to the save from step
    /// `back_to`, or, with none, the run is gone.
    #[error(
        "The loss became {loss} at step {step}; training stopped (try a lower learning rate). {}",
        diverged_hint(*.back_to)
    )]
    Diverged {
        step: usize,
        loss: NonFinite,
        back_to: Option<usize>,
    },
    /// A fine-tuning asked to start without the weights it starts from: it was never kept
    /// with them.
    #[error("This fine-tuning run was not saved before it stopped: fine-tune again from the lab.")]
    FineTuningUnsaved,
    /// A continue came without its checkpoint.
    #[error("The run cannot be continued: no checkpoint came with it.")]
    NoCheckpoint,
    /// The checkpoint to continue from cannot be read, as its decoder says (the worker's
    /// own error, whose type the page's build, without training, does not have).
    #[error("The run cannot be continued: {0}.")]
    Unresumable(String),
    /// The run's model cannot be made: its plan, or the weights it starts from, as said.
    #[error("The run cannot start: {0}.")]
    NotMade(String),
    /// The data's manifest could not be had, as the fetch says.
    #[error("The training data cannot be found: {0}")]
    NoManifest(String),
    /// Not one MNIST image could be loaded: the run would wait forever.
    #[error(
        "None of the training data could be loaded, so the run cannot start: check the connection and start again."
    )]
    NoTrainingData,
}

/// Why a browser computes on the CPU when it has no WebGPU at all (Firefox on Linux, older
/// Safari): said beside the backend, short.
pub const NO_WEBGPU: &str = "this browser has no WebGPU";

/// Why the run is on the device it is on, where that is worth saying: WebGPU could not be had,
/// or the two were timed. Only what a device says of itself travels as its words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum DeviceNote {
    /// The browser has no WebGPU.
    NoWebGpu,
    /// This build was made without the WebGPU backend.
    NotBuilt,
    /// WebGPU would not start, as it says.
    Unavailable(String),
    /// WebGPU failed the timed trial steps, as it says.
    TrialFailed(String),
    /// Timed, WebGPU was faster and was chosen.
    Chosen { gpu_ms: f64, cpu_ms: f64 },
    /// Timed, the CPU was faster.
    CpuFaster { cpu_ms: f64, gpu_ms: f64 },
    /// WebGPU's first steps took longer than the trial waits (`deadline_s`).
    GpuTooSlow { deadline_s: f64, cpu_ms: f64 },
}

impl std::fmt::Display for DeviceNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoWebGpu => f.write_str(NO_WEBGPU),
            Self::NotBuilt => f.write_str("this build has no WebGPU backend"),
            Self::Unavailable(why) => write!(f, "WebGPU is unavailable ({why})"),
            Self::TrialFailed(why) => write!(f, "WebGPU failed its trial steps ({why})"),
            Self::Chosen { gpu_ms, cpu_ms } => write!(
                f,
                "chosen: {gpu_ms:.0} ms a step on WebGPU, {cpu_ms:.0} ms on the CPU"
            ),
            Self::CpuFaster { cpu_ms, gpu_ms } => write!(
                f,
                "the CPU is faster: {cpu_ms:.0} ms a step, WebGPU {gpu_ms:.0} ms"
            ),
            Self::GpuTooSlow { deadline_s, cpu_ms } => write!(
                f,
                "WebGPU took over {deadline_s} s for its first steps; the CPU takes {cpu_ms:.0} ms a step"
            ),
        }
    }
}

/// A value that is not a number, as JSON, which has no such numbers, carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum NonFinite {
    #[error("NaN")]
    NaN,
    #[error("inf")]
    Infinite,
    #[error("-inf")]
    NegInfinite,
}

impl NonFinite {
    /// `value`, unless it is a number.
    pub fn of(value: f32) -> Option<Self> {
        match value {
            v if v.is_nan() => Some(Self::NaN),
            f32::INFINITY => Some(Self::Infinite),
            f32::NEG_INFINITY => Some(Self::NegInfinite),
            _ => None,
        }
    }
}

fn resume_hint(saved: Option<usize>) -> String {
    match saved {
        Some(step) => format!("The run saved at step {step} can be resumed."),
        None => "Nothing was saved yet.".to_string(),
    }
}

fn diverged_hint(back_to: Option<usize>) -> String {
    match back_to {
        Some(step) => {
            format!("The model is back at the save from step {step}; Resume continues from there.")
        }
        None => "Nothing was saved before it, so the run is gone: start again.".to_string(),
    }
}

impl super::Greeting for FromTrainer {
    fn greeting(&self) -> Option<&str> {
        match self {
            Self::Listening { build } => Some(build),
            _ => None,
        }
    }
}

impl super::Called for ToTrainer {
    fn called(&self) -> &'static str {
        "a command"
    }
}
