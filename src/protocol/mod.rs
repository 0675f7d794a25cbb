//! What the page and its workers say to each other, one file per pair: plain data with typed
//! values, sent as JSON, with bytes (weights, a run file, a step's shards) travelling
//! beside the message rather than inside it (`bytes`). Pure: both sides and the native tests
//! share it; `web::packet` carries it and `web::link` spawns the workers that speak it.
//!
//! It may use `train`'s types (a plan, a report, a step's shards); `train` never uses it.

pub mod bytes;
pub mod drawing;
pub mod explain;
#[cfg(feature = "train")]
pub mod helper;
pub mod trainer;

pub use bytes::{BytesError, bytes_to_floats, bytes_to_images, floats_to_bytes, images_to_bytes};
pub use drawing::{FromDrawing, ToDrawing};
pub use explain::{FromExplainer, ToExplainer};
#[cfg(feature = "train")]
pub use helper::{FromHelper, PartsError, ToHelper};
pub use trainer::{
    BackendKind, DataProgress, DeviceNote, FromTrainer, KEEP_WHILE_HIDDEN_MS, NO_WEBGPU, NonFinite,
    RunState, ToTrainer, TrainerFailure, WeightsPurpose,
};
// Where the page has always found it; the saved state that makes it is `train`'s.
pub use crate::train::SavedSummary;

/// The build the page and its workers are of: a hash of the sources (`build.rs`). A worker's
/// greeting names its build, and the page refuses one of another build, as a new version
/// deployed under an open page would serve.
pub const BUILD: &str = env!("VITLAB_BUILD");

/// A worker's message that may be its first: the one that says it listens, and names the
/// build the worker is of. Anything posted to a worker before it listens is lost, so
/// `web::link` holds packets until this comes.
pub trait Greeting {
    /// The build the worker is of, where this is its greeting.
    fn greeting(&self) -> Option<&str>;
}

/// A message to a worker as an error names it when posting it fails ("refused a request").
pub trait Called {
    fn called(&self) -> &'static str;
}

/// A worker's answer to a request (the drawing and explaining workers'; which request it
/// answers travels in its packet).
pub trait Reply {
    /// The worker's words when its device failed: the page trusts it no more.
    fn fault(&self) -> Option<&str>;
}
