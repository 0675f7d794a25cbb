//! The draw card: the pad, a random test digit instead of a drawing, and the latency.

use std::cell::Cell;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::classifier::Classifications;
use super::draw_pad::{DrawPad, PadImage};
use super::prediction::Latency;
use crate::ui::state::LabState;
use crate::web;

thread_local! {
    /// The example has been asked for in this page's life: a pad built again (Draw left and
    /// come back to) never draws it again.
    static EXAMPLE_ASKED: Cell<bool> = const { Cell::new(false) };
}

/// How long the page is quiet, once the model is in, before the pad draws the example.
const EXAMPLE_QUIET_MS: u32 = 300;

#[component]
pub(super) fn DrawCard() -> impl IntoView {
    let lab = expect_context::<LabState>();
    let classifier = expect_context::<Classifications>();
    let digit = lab.shown_digit;
    // Drawing (or clearing) puts the pad's own image back.
    let from_pad = Callback::new(move |drawn: PadImage| {
        if digit.with_untracked(Option::is_some) {
            digit.set(None);
        }
        classifier.classify_from(drawn.image, drawn.at_ms);
    });
    let random_digit = move |_| lab.show_random_digit();
    // A first look opens at work: once the model is in and the page is quiet, the pad draws
    // the example digit by itself, and the prediction, the maps and the story follow it.
    let example = RwSignal::new(false);
    Effect::new(move |asked: Option<bool>| {
        if asked == Some(true) || lab.engine.with(Option::is_none) || EXAMPLE_ASKED.get() {
            return asked.unwrap_or(false);
        }
        EXAMPLE_ASKED.set(true);
        spawn_local(async move {
            web::when_idle(EXAMPLE_QUIET_MS).await;
            let _ = example.try_set(true);
        });
        true
    });
    view! {
        <section class="card draw">
            <h2>"Draw a digit"</h2>
            <DrawPad on_image=from_pad shown=Signal::derive(move || digit.get().map(|d| d.image)) strokes=lab.strokes example=example />
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
