//! What the model reads, kept while another place is shown: the pad's strokes, a test digit
//! shown instead of a drawing, and the image given to the model.

use leptos::prelude::*;

use super::ShownDigit;

/// The pad's strokes, each a list of points in the pad's canvas pixels.
pub type PadStrokes = StoredValue<Vec<Vec<(f64, f64)>>>;

/// The lab's input, a context of its own (`AppState::provide`).
#[derive(Clone, Copy)]
pub struct Drawing {
    /// What is drawn on the pad.
    pub strokes: PadStrokes,
    /// A test digit shown in the draw panel instead of a drawing, set from anywhere.
    pub shown_digit: RwSignal<Option<ShownDigit>>,
    /// The image the model is given: the drawing, or a test digit (the training run probes
    /// it too).
    pub model_input: RwSignal<Option<Vec<u8>>>,
}

impl Drawing {
    /// Nothing drawn, shown or read.
    pub fn new() -> Self {
        Self {
            strokes: StoredValue::new(Vec::new()),
            shown_digit: RwSignal::new(None),
            model_input: RwSignal::new(None),
        }
    }
}

impl Default for Drawing {
    fn default() -> Self {
        Self::new()
    }
}
