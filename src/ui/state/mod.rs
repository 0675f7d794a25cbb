//! The page's services and what its components share through Leptos context, in one home:
//! the page's [`AppState`] and the small parts of it a card takes alone: the model and where
//! it runs ([`ModelHost`]), what it reads ([`Drawing`]), how the lab is looked at
//! ([`LabView`]), the mean attention distance over a batch of test digits
//! ([`BatchDistance`]), how much of the page below is in ([`Revealed`]); the drawing's
//! [`Classifications`], the [`Explainer`] worker, a test digit shown in the draw panel,
//! the example a first look opens on ([`claim_example`]), the person's set ([`Handwriting`]) and [`FineTuning`] on it, the [`RunKeeper`] that keeps
//! each run's record, [`Training`] (the training panel as a service a card asks and awaits),
//! and how a card asks a worker about the drawing ([`WhenSettled`], [`Newest`]). No component
//! lives here: the components read this and ask it, never the other way round.

mod app;
mod asking;
mod batch_distance;
mod classifications;
mod drawing;
mod explainer;
mod fine_tuning;
mod first_look;
mod handwriting;
mod host;
mod lab_services;
mod lab_view;
mod page_problem;
mod revealed;
mod run_keeper;
mod shown_digit;
mod training;

pub use app::{AppState, WeightsOffer};
pub use asking::{Newest, WhenSettled};
pub use batch_distance::{BatchDistance, DistanceError};
pub use classifications::Classifications;
pub use drawing::{Drawing, PadStrokes};
pub use explainer::{ExplainError, Explainer};
pub use fine_tuning::{COPIES, EPOCHS, FineTuning, MNIST, MixChoice, Scoring, Stage};
pub use first_look::{claim_example, nothing_drawn};
pub use handwriting::Handwriting;
pub use host::{BackendNote, EngineSignal, HostError, ModelHost, browser_has_webgpu};
pub use lab_services::{insight_of, provide_lab};
pub use lab_view::LabView;
pub use page_problem::PageProblem;
pub use revealed::{Below, Revealed};
pub use run_keeper::{RunKeeper, RunsNote};
pub use shown_digit::ShownDigit;
pub use training::{
    PlanChoice, RunEnded, RunSteps, StartError, Training, TrainingControl, provide_training,
};
