//! What the page's components share through Leptos context, and the services it holds: the
//! page's [`AppState`] and the lab's [`LabState`], the model and where it runs
//! ([`ModelHost`]), a test digit shown in the draw panel, the mean attention distance measured
//! over a batch of test digits, the [`RunKeeper`] that keeps each run's record, [`Training`] (the training panel as a
//! service a card asks and awaits), and how a card
//! asks a worker about the drawing ([`WhenSettled`], [`Newest`]). No component lives here: the
//! components read this, never the other way round.

mod app;
mod asking;
mod batch_distance;
mod handwriting;
mod host;
mod lab;
mod revealed;
mod run_keeper;
mod shown_digit;
mod training;

pub use app::{AppState, WeightsOffer};
pub use asking::{Newest, WhenSettled};
pub use batch_distance::{DistanceError, test_batch_distance};
pub use handwriting::Handwriting;
pub use host::{CpuEngine, EngineSignal, HostError, ModelHost, WeightsBytes, browser_has_webgpu};
pub use lab::{LabState, PadStrokes};
pub use revealed::{Below, Revealed};
pub use run_keeper::RunKeeper;
pub use shown_digit::ShownDigit;
pub use training::{
    PlanChoice, RunEnded, RunSteps, StartError, Training, TrainingControl, provide_training,
};
