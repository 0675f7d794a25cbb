//! What the training worker and one of its helpers say to each other: one job at a time, the
//! values (parameters and images, or gradients) travelling beside the message as bytes.

use serde::{Deserialize, Serialize};

use super::bytes::{BytesError, floats_to_bytes, whole_floats};
use crate::model::ModelConfig;
use crate::train::{ShardJob, ShardJobError, ShardJobHeader, ShardsDone, ShardsDoneHeader};

/// The training worker to its helper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToHelper {
    /// Build `config`'s model on the CPU (its values come with each job). Answered by
    /// [`FromHelper::Built`] or [`FromHelper::Failed`].
    Setup { config: ModelConfig },
    /// Compute the shards whose parameters and images travel beside this. Answered by
    /// [`FromHelper::Done`] or [`FromHelper::Failed`].
    Job(ShardJobHeader),
}

/// The helper to the training worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FromHelper {
    /// The worker listens: messages sent before this would have been lost.
    Listening {
        /// The build the worker is of ([`super::BUILD`]).
        build: String,
    },
    /// The model is built: jobs may come.
    Built,
    /// The shards' gradients travel beside this.
    Done(ShardsDoneHeader),
    /// The setup or the job could not be done; the helper takes no more.
    Failed { message: String },
}

impl super::Greeting for FromHelper {
    fn greeting(&self) -> Option<&str> {
        match self {
            Self::Listening { build } => Some(build),
            _ => None,
        }
    }
}

impl super::Called for ToHelper {
    fn called(&self) -> &'static str {
        match self {
            Self::Setup { .. } => "its setup",
            Self::Job(_) => "a job",
        }
    }
}

/// A job or a reply whose bytes do not hold what its header announces.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PartsError {
    #[error(transparent)]
    Bytes(#[from] BytesError),
    #[error("the shards' images, {0} of {1:?} values, are too many to count")]
    Uncountable(usize, [usize; 3]),
}

/// A damaged reply is one more way the helper failed: the worker computes its shards itself.
impl From<PartsError> for ShardJobError {
    fn from(error: PartsError) -> Self {
        Self::Damaged(error.to_string())
    }
}

impl ShardJob {
    /// The header and the bytes that travel beside it (the parameters, then the images).
    pub fn into_parts(self) -> (ShardJobHeader, Vec<u8>) {
        let bytes = floats_to_bytes(self.params.iter().chain(&self.images));
        (self.header, bytes)
    }

    /// The job from its header and bytes, which must hold exactly the values it announces.
    pub fn from_parts(header: ShardJobHeader, bytes: &[u8]) -> Result<Self, PartsError> {
        let images = Self::image_count(&header).unwrap_or(usize::MAX);
        let expected = header
            .image
            .iter()
            .try_fold(images, |n, &d| n.checked_mul(d))
            .and_then(|values| values.checked_add(header.params))
            .ok_or(PartsError::Uncountable(images, header.image))?;
        let mut values = whole_floats(bytes, "the job's bytes", Some(expected))?;
        let images = values.split_off(header.params);
        Ok(Self {
            header,
            params: values,
            images,
        })
    }
}

impl ShardsDone {
    /// The header and the bytes that travel beside it (the gradients).
    pub fn into_parts(self) -> (ShardsDoneHeader, Vec<u8>) {
        let bytes = floats_to_bytes(&self.gradients);
        (self.header, bytes)
    }

    pub fn from_parts(header: ShardsDoneHeader, bytes: &[u8]) -> Result<Self, PartsError> {
        Ok(Self {
            gradients: whole_floats(bytes, "the gradients' bytes", None)?,
            header,
        })
    }
}
