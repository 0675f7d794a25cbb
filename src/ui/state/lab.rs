//! The lab's share of the page's state: the page's answers to its failures and problems, and
//! what the lab shows. The model itself is [`super::ModelHost`]'s, a context of its own.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{ModelHost, Revealed, ShownDigit};

/// The pad's strokes, each a list of points in the pad's canvas pixels.
pub type PadStrokes = StoredValue<Vec<Vec<(f64, f64)>>>;
use crate::analysis::MapChoice;
use crate::model::HeadsOff;
use crate::protocol::BackendKind;
use crate::web::DrawingError;

/// What the lab shares with the page, provided as context before a [`crate::ui::Lab`] is built.
#[derive(Clone, Copy)]
pub struct LabState {
    /// Told where a classification failed and why, e.g. because the GPU was lost; answers
    /// whether the model now runs elsewhere, to classify the drawing again there.
    pub on_failure: Callback<(BackendKind, DrawingError), bool>,
    /// Told of any other problem, to show it (the model in use stays where it is).
    pub on_problem: Callback<String>,
    /// Mean attention distance over a batch of test digits, when known.
    pub batch_distance: Signal<Option<Vec<Vec<f32>>>>,
    /// Told that a card showing the batch's distance is seen: it is measured then, not before.
    pub want_batch_distance: Callback<()>,
    /// How much of the page below its first screen is in.
    pub revealed: Revealed,
    /// What is drawn on the pad, kept while another place is shown.
    pub strokes: PadStrokes,
    /// Whether a click on a head's map switches it off (else it shows it large), kept while
    /// another place is shown.
    pub heads_switching: RwSignal<bool>,
    /// A test digit shown in the draw panel instead of a drawing, set from anywhere.
    pub shown_digit: RwSignal<Option<ShownDigit>>,
    /// The attention map shown large (a link may set it).
    pub map: RwSignal<MapChoice>,
    /// The heads switched off in every classification (a link may set them).
    pub heads_off: RwSignal<HeadsOff>,
    /// The image the model is given: the drawing, or a test digit (the training run probes
    /// it too).
    pub model_input: RwSignal<Option<Vec<u8>>>,
}

impl LabState {
    /// A random test digit in the draw panel instead of a drawing, as its button there puts
    /// one: what a card waiting for a drawing offers in one click.
    pub fn show_random_digit(self, host: ModelHost) {
        let Some(engine) = host.engine.get_untracked() else {
            return;
        };
        spawn_local(async move {
            match engine.test_digit(None).await {
                Ok(digit) => self.shown_digit.set(Some(ShownDigit::of_test_digit(digit))),
                Err(error) => self.on_problem.run(format!("No test digit: {error}")),
            }
        })
    }
}
