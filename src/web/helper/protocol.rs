//! What the training worker and its helper say to each other: one job at a time, the values
//! (parameters and images, or gradients) travelling beside the message as bytes.

use serde::{Deserialize, Serialize};

use crate::model::ModelConfig;
use crate::train::{HalfDoneHeader, HalfJobHeader};

/// The training worker to its helper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToHelper {
    /// Build `config`'s model on the CPU (its values come with each job). Answered by
    /// [`FromHelper::Ready`] or [`FromHelper::Failed`].
    Setup { config: ModelConfig },
    /// Compute the half whose parameters and images travel beside this. Answered by
    /// [`FromHelper::Done`] or [`FromHelper::Failed`].
    Job(HalfJobHeader),
}

/// The helper to the training worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FromHelper {
    /// The worker listens: messages sent before this would have been lost.
    Listening,
    /// The model is built: jobs may come.
    Ready,
    /// The half's gradients travel beside this.
    Done(HalfDoneHeader),
    /// The setup or the job could not be done; the helper takes no more.
    Failed { message: String },
}
