//! The draw card: the pad, a random test digit instead of a drawing, and the latency.

use leptos::prelude::*;

use super::draw_pad::{DrawPad, PadImage};
use super::prediction::Latency;
use crate::ui::state::{Classifications, LabState, ModelHost};

#[component]
pub(super) fn DrawCard() -> impl IntoView {
    let lab = expect_context::<LabState>();
    let host = expect_context::<ModelHost>();
    let classifier = expect_context::<Classifications>();
    let digit = lab.shown_digit;
    // Drawing (or clearing) puts the pad's own image back.
    let from_pad = Callback::new(move |drawn: PadImage| {
        if digit.with_untracked(Option::is_some) {
            digit.set(None);
        }
        classifier.classify_from(drawn.image, drawn.at_ms);
    });
    let random_digit = move |_| lab.show_random_digit(host);
    view! {
        <section class="card draw">
            <h2>"Draw a digit"</h2>
            <DrawPad on_image=from_pad shown=Signal::derive(move || digit.get().map(|d| d.image)) strokes=lab.strokes />
            <div class="buttons">
                <button data-testid="random-test-digit" on:click=random_digit>"Random test digit"</button>
            </div>
            {move || digit.get().map(|d| view! {
                <p class="caption" data-testid="shown-digit" data-label=d.label.to_string()>
                    {format!("{}, labelled {}: the model sees this 28×28 image as it is", d.origin, d.label)}
                </p>
            })}
            <Latency latencies=classifier.latencies runs=classifier.runs />
        </section>
    }
}
