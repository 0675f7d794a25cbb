//! What the model says of the image: the predicted digit, a bar per class, and how long it
//! took to say it.

use std::sync::Arc;

use leptos::prelude::*;

use super::handwriting::TeachButtons;
use super::heads_off::describe;
use crate::analysis::reading::Reading;
use crate::data::NUM_CLASSES;
use crate::ui::state::Classifications;

/// The prediction card, busy while an inference runs.
#[component]
pub(super) fn PredictionCard() -> impl IntoView {
    let classifier = expect_context::<Classifications>();
    let in_flight = classifier.in_flight;
    view! {
        <section class="card prediction" data-testid="prediction-card" data-busy=move || in_flight.get().to_string()
            data-heads-off=move || classifier.result_off.with(crate::model::HeadsOff::to_param)>
            <h2>"Prediction"</h2>
            <Prediction result=classifier.result />
            <TeachButtons />
            {move || classifier.result_off.with(|off| (!off.is_empty()).then(|| view! {
                <p class="heads-off-note" data-testid="prediction-heads-off">{format!("With heads {}.", describe(off))}</p>
            }))}
        </section>
    }
}

/// The predicted digit, large, and a bar per class.
#[component]
pub fn Prediction(#[prop(into)] result: Signal<Option<Arc<Reading>>>) -> impl IntoView {
    view! {
        <div class="digit" data-testid="prediction">
            {move || result.get().map(|r| r.predicted().to_string()).unwrap_or_else(|| "–".into())}
        </div>
        <ol class="bars">
            {(0..NUM_CLASSES)
                .map(|digit| {
                    let p = move || result.get().map(|r| r.probabilities[digit]).unwrap_or(0.0);
                    view! {
                        <li data-testid=format!("probability-{digit}") data-value=move || format!("{:.6}", p())>
                            <span class="label">{digit}</span>
                            <span class="bar" style:width=move || format!("{:.1}%", 100.0 * p())></span>
                            <span class="value">{move || format!("{:.1}%", 100.0 * p())}</span>
                        </li>
                    }
                })
                .collect_view()}
        </ol>
    }
}

/// p50 and p95 of drawing-to-prediction latency.
#[component]
pub(super) fn Latency(latencies: RwSignal<Vec<f64>>, runs: RwSignal<usize>) -> impl IntoView {
    let text = move || {
        latencies.with(|l| {
            if l.is_empty() {
                return String::new();
            }
            let mut sorted = l.clone();
            sorted.sort_by(f64::total_cmp);
            let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
            format!(
                "latency p50 {:.1} ms · p95 {:.1} ms ({} runs)",
                at(0.5),
                at(0.95),
                sorted.len()
            )
        })
    };
    view! { <p class="latency" data-testid="latency" data-runs=move || runs.get().to_string()>{text}</p> }
}
