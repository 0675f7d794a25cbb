//! What the page's components share through Leptos context, and the services it holds: the
//! page's [`AppState`] and the lab's [`LabState`], the model and where it runs
//! ([`ModelHost`]), the test digits it is shown, the mean attention distance measured over a
//! batch of them, and the [`RunKeeper`] that keeps each run's record. No component lives
//! here: the components read this, never the other way round.

mod app;
mod batch_distance;
mod host;
mod lab;
mod run_keeper;
mod test_digits;

pub use app::{AppState, WeightsOffer};
pub use batch_distance::{DistanceError, distance_digits_of, test_batch_distance};
pub use host::{EngineSignal, HostError, ModelHost, WeightsBytes, browser_has_webgpu};
pub use lab::LabState;
pub use run_keeper::{Interest, RunKeeper};
pub use test_digits::{ShownDigit, TestDigits, TestDigitsError};
