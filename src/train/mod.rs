//! Training: the plan a person chooses, the reports a run makes, and (with the `train`
//! feature) the step and the session that the native CLI and the browser's worker share.

#[cfg(feature = "train")]
mod adamw;
#[cfg(all(feature = "train", feature = "gpu"))]
mod adamw_kernel;
#[cfg(feature = "train")]
mod checkpoint;
mod cpu_workers;
mod distill;
mod evaluate;
mod mix;
#[cfg(feature = "train")]
mod objective;
#[cfg(feature = "train")]
mod optimizer;
mod plan;
mod report;
mod schedule;
#[cfg(feature = "train")]
mod session;
#[cfg(feature = "train")]
mod shard_job;
#[cfg(feature = "train")]
mod shards;
mod state;
#[cfg(feature = "train")]
mod trainer;

#[cfg(feature = "train")]
pub use adamw::FusedAdamW;
#[cfg(feature = "train")]
pub use checkpoint::{ADAM_TIMES_KEY, Checkpoint, CheckpointError, SavedMoments};
pub use cpu_workers::{CpuWorkers, MAX_SHARDS, MIN_SHARD, shards_of};
pub use distill::{Distillation, DistillationError, DistillationKind};
pub use evaluate::{Evaluation, classify_in_batches, count_correct, predictions};
pub use mix::{MAX_COPIES, MAX_MIX_DIGITS, MAX_MIX_IMAGES, MixError, PersonalMix};
#[cfg(feature = "train")]
pub use objective::{BatchGradients, Objective, Teacher, cross_entropy};
#[cfg(feature = "train")]
pub use optimizer::{AdamW, Moments};
pub use plan::{PlanError, TrainingPlan};
pub use report::{
    CellDigits, EvalPoint, History, MAX_MISTAKES, Mistake, StepPoint, StepReport, TestReport,
    test_report,
};
pub use schedule::LrSchedule;
#[cfg(feature = "train")]
pub use session::{JOIN_IMAGES, JOIN_STEPS, PendingStep, Session, TrainingError};
#[cfg(feature = "train")]
pub use shard_job::{
    ShardDoneHeader, ShardHelper, ShardJob, ShardJobError, ShardJobHeader, ShardPart, ShardsDone,
    ShardsDoneHeader, parameter_values,
};
#[cfg(feature = "train")]
pub use shards::{Shard, add_in_order, in_shards, shard_count, shard_gradients, shard_of_batch};
pub use state::{SESSION_KEY, SavedRunError, SavedSummary, SessionState, Smoothing};
#[cfg(feature = "train")]
pub use trainer::{StepOutput, Trainer, parameter_gradients};

/// Optimiser settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptimizerSettings {
    /// AdamW's decoupled weight decay; 0 gives plain Adam, the seed's optimiser.
    pub weight_decay: f32,
    /// Share of the probability mass spread over all classes (0 = none).
    pub label_smoothing: f32,
}

impl Default for OptimizerSettings {
    fn default() -> Self {
        Self {
            weight_decay: 0.0,
            label_smoothing: 0.0,
        }
    }
}
