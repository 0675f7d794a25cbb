//! Why a `vit` command failed: typed through the commands, made text only where `main`
//! prints it. Errors of the library pass through as they are; a file's name is added where
//! the library's error does not know which file it read.

use std::fmt;
use std::path::{Path, PathBuf};

use vitlab::data::idx::IdxError;
use vitlab::model::{ConfigError, CostError};
use vitlab::native::NativeError;
use vitlab::train::{CheckpointError, PlanError, SavedRunError};
use vitlab::weights::{AverageError, WeightsError};

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[cfg(not(feature = "gpu"))]
    #[error(
        "this `vit` was built without GPU support; build it with `cargo build --release --features gpu --bin vit`"
    )]
    NoGpu,
    #[error(transparent)]
    Data(#[from] NativeError),
    #[error(transparent)]
    Idx(#[from] IdxError),
    /// A file `vit` read or wrote.
    #[error("{}: {source}", path.display())]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Weights { path: PathBuf, source: WeightsError },
    #[error(transparent)]
    Average(#[from] AverageError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Budget(#[from] CostError),
    /// The device did not hand the occlusion curves' values back.
    #[error("occlusion: {0}")]
    Occlusion(vitlab::weights::ReadbackError),
    #[error("{}: a model's input is {expected} bytes (28 × 28 pixels), not {bytes}", path.display())]
    ImageSize {
        path: PathBuf,
        bytes: u64,
        expected: usize,
    },
    #[error("--extra-copies {copies} of {digits} digits makes a mix of more than 120,000 images")]
    ExtraTooLarge { copies: usize, digits: usize },
    #[error("--off: {0}")]
    HeadsOff(vitlab::model::AblationError),
    #[error("ablate: {0}")]
    Ablate(vitlab::analysis::ablation::AblationMeasureError),
    #[error("{}: a ViT's weights are needed here", path.display())]
    NotAVit { path: PathBuf },
    #[error("patch {patch} is outside the ViT's {patches} patches (0 to {})", patches - 1)]
    HiddenPatch { patch: usize, patches: usize },
    #[error("{source} (at --eval-batch-size {batch})")]
    EvalBatch { source: CostError, batch: usize },

    #[error("--chunk-items must be at least 1")]
    NoChunkItems,

    #[error("the IDX files hold {train} training and {test} test images: a data set needs both")]
    NoImages { train: usize, test: usize },

    #[error(
        "--batch-size must be 1 to {images} (the images of the first training chunk), --steps and --inferences at least 1"
    )]
    BenchSizes { images: usize },
    #[error("the loss is not finite")]
    BenchLoss,

    #[error("--preset {preset} is not a preset of that --model")]
    PresetOfOtherModel { preset: &'static str },
    #[error("{flag} does not shape a {architecture} (see vit train --help)")]
    OptionOfOtherModel {
        flag: &'static str,
        architecture: &'static str,
    },
    #[error("installing the Ctrl-C handler: {0}")]
    CtrlC(#[from] ctrlc::Error),
    #[error("interrupted in epoch {epoch}; {last}")]
    Interrupted { epoch: usize, last: LastCheckpoint },
    #[error("the loss became {loss} at step {step}; lower --lr ({last})")]
    LossBecame {
        loss: f32,
        step: usize,
        last: LastCheckpoint,
    },
    #[error(
        "{} is a checkpoint folder of an older vit, which this one cannot resume; start afresh (or continue it with that vit)",
        path.display()
    )]
    CheckpointFolder { path: PathBuf },
    #[error("{}: {source}", path.display())]
    Checkpoint {
        path: PathBuf,
        source: CheckpointError,
    },
    #[error(
        "{}: the run learns from a teacher: give its weights again with --teacher FILE (to go on without one, start afresh from its weights with --init-from)",
        path.display()
    )]
    NeedsTeacher { path: PathBuf },
    #[error("{}: {source}", path.display())]
    Resume {
        path: PathBuf,
        source: SavedRunError,
    },
}

impl CliError {
    /// For `map_err`: an I/O error on `path`.
    pub fn file(path: &Path) -> impl FnOnce(std::io::Error) -> Self + use<> {
        let path = path.to_path_buf();
        move |source| Self::File { path, source }
    }
}

/// What a run that stopped early leaves to continue from.
#[derive(Debug)]
pub enum LastCheckpoint {
    /// No epoch had ended (in a run that did not resume).
    None,
    In(PathBuf),
}

impl fmt::Display for LastCheckpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("no epoch had ended, so there is no checkpoint to resume"),
            Self::In(path) => write!(
                f,
                "the checkpoint of the last epoch is in {} (continue with --resume)",
                path.display()
            ),
        }
    }
}
