//! Leptos components. They never touch a tensor: the model sits behind [`crate::web::Engine`].
//! They share state through Leptos context: the page's [`AppState`] and the lab's
//! [`LabState`] (in `state`, which knows no component), the training run's own.

mod app;
mod inductive_bias;
mod lab;
mod runs;
mod state;
mod training;
mod widgets;

pub use app::App;
pub use inductive_bias::InductiveBias;
pub use lab::{AnalysisView, AttentionTimeline, AttentionView, CnnView, DrawPad, Lab, Prediction};
pub use runs::RunsPanel;
pub use state::{
    AppState, DistanceError, EngineSignal, HostError, LabState, ModelHost, RunKeeper, ShownDigit,
    TestDigits, TestDigitsError, WeightsOffer, browser_has_webgpu,
};
pub use training::TrainingPanel;
pub use widgets::{ErrorBanner, HeatCanvas, LineChart, Palette, Series, paint};

pub use crate::analysis::MapChoice;
pub use crate::shipped::{DEFAULT_WEIGHTS, SHIPPED_MODELS};
