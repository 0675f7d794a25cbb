//! Patches hidden, ViT against CNN: click patches of the model's input to hide them and watch
//! both models read what is left; and both models' test accuracy as a growing fraction of
//! patches is hidden, at random or the ViT's most relevant first, measured in the explaining
//! worker on test digits. The same pixels are hidden from both models; the ViT is also read
//! with those patches' tokens dropped, which a CNN cannot do.

use std::collections::BTreeSet;
use std::sync::Arc;

use leptos::ev::MouseEvent;
use leptos::html::Canvas;
use leptos::prelude::*;
use leptos::task::spawn_local;

use super::explainer::Explainer;
use crate::analysis::occlusion::{Comparison, OcclusionCurves, occlude};
use crate::data::{IMAGE_PIXELS, IMAGE_SIDE};
use crate::ui::state::LabState;
use crate::ui::widgets::{LineChart, Series, offer_download, paint};

/// Test digits the curves are measured on: enough for a smooth curve, seconds in a worker.
const CURVE_IMAGES: u32 = 200;
const CANVAS: u32 = 168;

/// A model's reading: its class and probability.
fn reading(probabilities: &[f32]) -> String {
    probabilities
        .iter()
        .copied()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or("–".into(), |(c, p)| format!("{c} ({:.0}%)", 100.0 * p))
}

#[component]
pub(super) fn Occlusion(grid: usize) -> impl IntoView {
    let lab = expect_context::<LabState>();
    let explainer = expect_context::<Explainer>();
    let hidden = RwSignal::new(BTreeSet::<usize>::new());
    // The model's input once it has stayed unchanged a moment: this card repaints and asks
    // the worker then, never at every point of a stroke, whose latency the drawing feels.
    let settled = RwSignal::new(None::<Vec<u8>>);
    let timer = StoredValue::new_local(None::<gloo_timers::callback::Timeout>);
    Effect::new(move |_| {
        let input = lab.input.get();
        // Set only when it changed: each set asks the worker for three forward passes.
        let later = gloo_timers::callback::Timeout::new(150, move || {
            if settled.with_untracked(|shown| *shown != input) {
                settled.set(input);
            }
        });
        timer.set_value(Some(later));
    });
    let occluded = Memo::new(move |_| {
        let image: [u8; IMAGE_PIXELS] = settled.get()?.try_into().ok()?;
        let hidden: Vec<usize> = hidden.with(|h| h.iter().copied().collect());
        Some(occlude(&image, grid, &hidden))
    });
    let readings = RwSignal::new(None::<Result<Comparison, String>>);
    let latest = StoredValue::new(0u32);
    Effect::new(move |_| {
        let Some(image) = settled
            .get()
            .and_then(|image| <[u8; IMAGE_PIXELS]>::try_from(image).ok())
        else {
            readings.set(None);
            return;
        };
        // Patch indices below grid², which is at most 28² here.
        let patches: Vec<u16> =
            hidden.with(|h| h.iter().filter_map(|&p| u16::try_from(p).ok()).collect());
        let request = latest.get_value().wrapping_add(1);
        latest.set_value(request);
        let backend = explainer.backend();
        spawn_local(async move {
            let answer = explainer
                .ask(true, |worker| async move {
                    worker.compare(&image, patches, backend).await
                })
                .await;
            if latest.get_value() == request {
                readings.set(Some(answer));
            }
        });
    });

    let canvas_ref = NodeRef::<Canvas>::new();
    Effect::new(move |_| {
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        let pixels = occluded
            .get()
            .map_or_else(|| vec![0; IMAGE_PIXELS], |image| image.to_vec());
        paint::grey_image(&canvas, &pixels, IMAGE_SIDE);
        if let Some(ctx) = paint::context(&canvas) {
            let cell = f64::from(CANVAS) / grid as f64;
            ctx.set_stroke_style_str("rgba(120, 160, 255, 0.6)");
            for i in 1..grid {
                let at = i as f64 * cell;
                ctx.stroke_rect(at, 0.0, 0.0, f64::from(CANVAS));
                ctx.stroke_rect(0.0, at, f64::from(CANVAS), 0.0);
            }
            ctx.set_fill_style_str("rgba(255, 90, 90, 0.35)");
            for &patch in hidden.get().iter() {
                let (row, col) = (patch / grid, patch % grid);
                ctx.fill_rect(col as f64 * cell, row as f64 * cell, cell, cell);
            }
        }
    });
    let on_click = move |event: MouseEvent| {
        let Some(canvas) = canvas_ref.get_untracked() else {
            return;
        };
        if let Some(patch) = paint::cell_at(&canvas, &event, grid) {
            hidden.update(|h| {
                if !h.remove(&patch) {
                    h.insert(patch);
                }
            });
        }
    };

    let curves = RwSignal::new(None::<Result<Arc<OcclusionCurves>, String>>);
    let measuring = RwSignal::new(false);
    let measure = move |_| {
        measuring.set(true);
        spawn_local(async move {
            let backend = explainer.backend();
            let answer = explainer
                .ask(true, |worker| async move {
                    worker.curves(CURVE_IMAGES, backend).await
                })
                .await;
            curves.set(Some(answer.map(Arc::new)));
            measuring.set(false);
        });
    };
    let series = Signal::derive(move || {
        let Some(Ok(curves)) = curves.get() else {
            return Vec::new();
        };
        let line = |label: &str, class: &'static str, values: &[f32]| Series {
            label: label.into(),
            class,
            points: curves
                .fractions
                .iter()
                .zip(values)
                .map(|(f, a)| (100.0 * f64::from(*f), f64::from(*a)))
                .collect(),
            dots: true,
        };
        vec![
            line("ViT, random", "vit-random", &curves.vit_random),
            line(
                "ViT, most relevant first",
                "vit-relevant",
                &curves.vit_relevant,
            ),
            line("CNN, random", "cnn-random", &curves.cnn_random),
            line(
                "CNN, most relevant first",
                "cnn-relevant",
                &curves.cnn_relevant,
            ),
            line(
                "ViT, tokens dropped, random",
                "vit-dropped-random",
                &curves.vit_dropped_random,
            ),
            line(
                "ViT, tokens dropped, most relevant first",
                "vit-dropped-relevant",
                &curves.vit_dropped_relevant,
            ),
        ]
    });

    view! {
        <div class="occlusion" data-testid="occlusion">
            <canvas node_ref=canvas_ref width=CANVAS height=CANVAS data-testid="occlusion-input" role="img"
                aria-label="the model's input; click a patch to hide it" on:click=on_click></canvas>
            <p data-testid="occlusion-readings" data-state=move || match readings.get() {
                None => "waiting",
                Some(Ok(_)) => "ready",
                Some(Err(_)) => "failed",
            }>{move || match readings.get() {
                None => "Draw a digit, then click its patches to hide them.".to_string(),
                Some(Ok(c)) => format!(
                    "{} hidden · ViT reads {} · CNN reads {} · ViT with their tokens dropped reads {}",
                    hidden.with(BTreeSet::len),
                    reading(&c.vit),
                    reading(&c.cnn),
                    reading(&c.vit_dropped)
                ),
                Some(Err(why)) => format!("The comparison failed: {why}."),
            }}</p>
            <div class="buttons">
                <button data-testid="occlusion-clear" on:click=move |_| hidden.set(BTreeSet::new())>"Show every patch"</button>
                <button data-testid="occlusion-measure" prop:disabled=move || measuring.get() on:click=measure>
                    {format!("Measure on {CURVE_IMAGES} test digits")}
                </button>
                <button data-testid="occlusion-csv" prop:disabled=move || !matches!(curves.get(), Some(Ok(_))) on:click=move |_| {
                    if let Some(Ok(c)) = curves.get_untracked() {
                        let _ = offer_download(c.csv().as_bytes(), "vitlab-occlusion.csv");
                    }
                }>"Curves as CSV"</button>
            </div>
            {move || match curves.get() {
                Some(Err(why)) => Some(view! { <p class="error" role="alert">{format!("The measurement failed: {why}.")}</p> }.into_any()),
                _ => None,
            }}
            {move || measuring.get().then(|| view! { <p class="hint">"Measuring in the explaining worker…"</p> })}
            <LineChart series=series y_range=(0.0, 1.0) x_label="% of patches hidden" testid="occlusion-chart" />
            <p class="hint">"Test accuracy as more patches are hidden, the same pixels for both models: at random, or the ViT's most relevant first (its gradient relevance for its prediction). A flatter random curve is the more robust model. Green: the ViT with those patches' tokens dropped from its input instead of blanked, which a CNN cannot do."</p>
        </div>
    }
}
