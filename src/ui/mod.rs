//! Leptos components. They never touch a tensor: the model sits behind [`crate::web::Engine`],
//! in a worker.
//! They share state through Leptos context (`state`, which knows no component): the page's
//! [`AppState`] and the small parts of it a card takes alone ([`ModelHost`], [`Drawing`],
//! [`LabView`], [`BatchDistance`], [`Revealed`]), and the services cards ask.

mod app;
mod inductive_bias;
mod lab;
mod places;
mod runs;
mod state;
mod story;
mod training;
mod widgets;

pub use app::App;
pub use inductive_bias::InductiveBias;
pub use lab::{AnalysisView, AttentionTimeline, AttentionView, CnnView, DrawPad, Lab, Prediction};
pub use runs::RunsPanel;
pub use state::{
    AppState, BatchDistance, Below, DistanceError, Drawing, EngineSignal, Handwriting, HostError,
    LabView, ModelHost, PadStrokes, Revealed, RunKeeper, ShownDigit, Training, WeightsOffer,
    browser_has_webgpu, provide_lab,
};
pub use training::TrainingPanel;
pub use widgets::{Arrival, ErrorBanner, HeatCanvas, LineChart, Palette, Series, paint};

pub use crate::analysis::MapChoice;

/// The id of `index.html`'s first screen below the header: static HTML painted before the app
/// arrives (made by `tests/e2e/make-frame.mjs` from the app's own), removed when the app is
/// shown ([`Arrival`]).
pub const STATIC_FRAME: &str = "frame";

/// The id of the element the app is built in, out of the document until it is whole
/// ([`Arrival`]); the style lays its children out as the body's own.
pub const APP_HOLDER: &str = "app";

/// The id of the backend lines in `index.html`'s header (the header itself is static and
/// stays): the app empties them and fills in its own.
pub const BACKEND_LINES: &str = "backend";
pub use crate::shipped::{DEFAULT_WEIGHTS, SHIPPED_MODELS};
