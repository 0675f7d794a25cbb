//! Leptos components. They never touch a tensor: the model sits behind [`crate::web::Engine`].
//! They share state through Leptos context: the page's [`AppState`], the lab's [`LabState`],
//! the training run's own.

mod app;
mod inductive_bias;
mod lab;
mod model;
mod runs;
mod training;
mod widgets;

pub use app::{App, AppState, WeightsOffer};
pub use inductive_bias::InductiveBias;
pub use lab::{
    AnalysisView, AttentionTimeline, AttentionView, CnnView, DrawPad, Lab, LabState, Prediction,
};
pub use model::{
    DistanceError, EngineSignal, HostError, ModelHost, ShownDigit, TestDigits, TestDigitsError,
    browser_has_webgpu,
};
pub use runs::{RunKeeper, RunsPanel};
pub use training::TrainingPanel;
pub use widgets::{ErrorBanner, HeatCanvas, LineChart, Palette, Series, paint};

pub use crate::analysis::MapChoice;
pub use crate::shipped::{DEFAULT_WEIGHTS, SHIPPED_MODELS};
