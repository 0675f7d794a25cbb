//! The example a first look opens on (`crate::example_digit`): given once a page load, to the
//! first place that reads a drawing once the model is in, and only while the lab has nothing
//! drawn or shown.

use std::cell::Cell;

use leptos::prelude::*;

use super::Drawing;

thread_local! {
    /// The example has been given in this page's life.
    static GIVEN: Cell<bool> = const { Cell::new(false) };
}

/// Whether the place asking gives the example now: the first ask in this page's life while
/// [`nothing_drawn`]. Every later ask is refused: a place left and come back to, or another
/// place, never gives it again.
pub fn claim_example(drawing: Drawing) -> bool {
    nothing_drawn(drawing) && !GIVEN.replace(true)
}

/// The lab has no drawing, no shown digit and nothing read: what the person does (a stroke, a
/// test digit) is never replaced by the example.
pub fn nothing_drawn(drawing: Drawing) -> bool {
    drawing.strokes.try_with_value(Vec::is_empty) == Some(true)
        && drawing.shown_digit.try_with_untracked(Option::is_none) == Some(true)
        && drawing.model_input.try_with_untracked(Option::is_none) == Some(true)
}
