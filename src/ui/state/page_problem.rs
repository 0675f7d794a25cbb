//! What the page's banner says went wrong, typed until the banner says it: the model's
//! start-up, weights that were not loaded, a link the page does not take, a drawing not read.

use super::{DistanceError, HostError};
use crate::analysis::MapChoice;
use crate::web::{DrawingError, FetchError};

/// A problem the banner shows; the page keeps working underneath.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PageProblem {
    /// What a link asks that the page does not take, as `crate::share` words it.
    #[error("The link: {}.", .0.join("; "))]
    Link(Vec<String>),
    /// The link's map is not one the model has.
    #[error(
        "The link: map={}: the model has {depth} layers of {heads} heads; ignored.",
        .map.to_param()
    )]
    MapDoesNotFit {
        map: MapChoice,
        depth: usize,
        heads: usize,
    },
    /// The model's worker, its warm-up, or its move off a failing GPU.
    #[error(transparent)]
    Host(HostError),
    /// The first weights could not be fetched.
    #[error(transparent)]
    Fetch(FetchError),
    /// Weights offered later (a run's, an upload) did not work: the model in use stays.
    #[error("{from} was not loaded: {why}. The model in use stays.")]
    NotInstalled { from: String, why: HostError },
    /// A shipped model could not be fetched: the model in use stays.
    #[error("{from} was not loaded: {why}. The model in use stays.")]
    NotFetched { from: String, why: FetchError },
    /// The drawing worker refused a drawing (a test chunk for the heads' means that did not
    /// load): the model stays where it is.
    #[error("The drawing was not read: {0}.")]
    DrawingRefused(DrawingError),
    #[error("No test digit: {0}")]
    NoTestDigit(DrawingError),
    #[error("The test batch for attention distance: {0}")]
    BatchDistance(DistanceError),
}
