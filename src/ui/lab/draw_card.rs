//! The draw card: the pad, a random test digit instead of a drawing, and the latency.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::draw_pad::{DrawPad, PadImage};
use super::prediction::Latency;
use crate::example_digit::{PAD_SIDE, example_image, example_strokes};
use crate::ui::state::{
    AppState, Classifications, Drawing, ModelHost, claim_example, nothing_drawn,
};
use crate::web;

/// How long the page is quiet, once the model is in, before the example is drawn.
const EXAMPLE_QUIET_MS: u32 = 300;

/// Once the model is in, if this page load has given no example yet and the lab has nothing
/// ([`claim_example`]), runs `give` after the page has been quiet a moment.
fn on_first_look(drawing: Drawing, host: ModelHost, give: impl FnOnce() + 'static) {
    let mut give = Some(give);
    Effect::new(move |claimed: Option<bool>| {
        if claimed == Some(true) || host.engine.with(Option::is_none) || !claim_example(drawing) {
            return claimed.unwrap_or(false);
        }
        if let Some(give) = give.take() {
            spawn_local(async move {
                web::when_idle(EXAMPLE_QUIET_MS).await;
                give();
            });
        }
        true
    });
}

/// A first look at a place without the pad (Experiments) reads the whole example at once, so
/// that every chart there shows its numbers; the pad shows it when Draw is opened, and the
/// person's first touch there takes it over.
pub(super) fn read_the_example_on_first_look() {
    let drawing = expect_context::<Drawing>();
    let host = expect_context::<ModelHost>();
    let classifier = expect_context::<Classifications>();
    on_first_look(drawing, host, move || {
        // A test digit taken meanwhile is the person's: it stays.
        if nothing_drawn(drawing) {
            drawing.strokes.set_value(example_strokes(PAD_SIDE as f64));
            let image = example_image(PAD_SIDE as usize).to_vec();
            classifier.classify_from(Some(image), web::now_ms());
        }
    });
}

#[component]
pub(super) fn DrawCard() -> impl IntoView {
    let app = expect_context::<AppState>();
    let drawing = expect_context::<Drawing>();
    let classifier = expect_context::<Classifications>();
    let digit = drawing.shown_digit;
    // Drawing (or clearing) puts the pad's own image back.
    let from_pad = Callback::new(move |drawn: PadImage| {
        if digit.with_untracked(Option::is_some) {
            digit.set(None);
        }
        classifier.classify_from(drawn.image, drawn.at_ms);
    });
    let random_digit = move |_| app.show_random_digit();
    // A first look opens at work: once the model is in and the page is quiet, the pad draws
    // the example digit by itself, and the prediction, the maps and the story follow it.
    let example = RwSignal::new(false);
    on_first_look(drawing, app.host, move || {
        let _ = example.try_set(true);
    });
    view! {
        <section class="card draw">
            <h2>"Draw a digit"</h2>
            <DrawPad on_image=from_pad shown=Signal::derive(move || digit.get().map(|d| d.image)) strokes=drawing.strokes example=example />
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
