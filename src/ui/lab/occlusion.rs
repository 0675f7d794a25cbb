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

use super::explainer::{ExplainError, Explainer};
use crate::analysis::occlusion::{Comparison, OcclusionCurves, occlude};
use crate::data::{IMAGE_PIXELS, IMAGE_SIDE};
use crate::ui::state::{LabState, Newest, WhenSettled};
use crate::ui::widgets::{LineChart, SaveFailed, Series, offer_download, paint};

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

/// Both models' readings of the input with patches hidden, as far as they have come: a
/// reading is shown only beside the hidden set it was asked for.
#[derive(Debug, Clone, PartialEq)]
enum Readings {
    /// Nothing drawn yet.
    Waiting,
    /// Asked for with `hidden` patches hidden; the answer has not come.
    Reading {
        hidden: usize,
    },
    Ready {
        hidden: usize,
        comparison: Comparison,
    },
    Failed(ExplainError),
}

#[component]
pub(super) fn Occlusion(grid: usize) -> impl IntoView {
    let lab = expect_context::<LabState>();
    let explainer = expect_context::<Explainer>();
    let hidden = RwSignal::new(BTreeSet::<usize>::new());
    // The model's input once it has settled: this card repaints and asks the worker then,
    // never at every point of a stroke, whose latency the drawing feels.
    let settled = RwSignal::new(None::<Vec<u8>>);
    let when_settled = WhenSettled::new();
    Effect::new(move |_| {
        let input = lab.input.get();
        // Set only when it changed: each set asks the worker for three forward passes.
        when_settled.run(move || {
            if settled.with_untracked(|shown| *shown != input) {
                settled.set(input);
            }
        });
    });
    let occluded = Memo::new(move |_| {
        let image: [u8; IMAGE_PIXELS] = settled.get()?.try_into().ok()?;
        let hidden: Vec<usize> = hidden.with(|h| h.iter().copied().collect());
        Some(occlude(&image, grid, &hidden))
    });
    let readings = RwSignal::new(Readings::Waiting);
    let newest = Newest::new();
    Effect::new(move |_| {
        let Some(image) = settled
            .get()
            .and_then(|image| <[u8; IMAGE_PIXELS]>::try_from(image).ok())
        else {
            readings.set(Readings::Waiting);
            return;
        };
        // Patch indices below grid², which is at most 28² here.
        let patches: Vec<u16> =
            hidden.with(|h| h.iter().filter_map(|&p| u16::try_from(p).ok()).collect());
        let count = patches.len();
        let ticket = newest.ticket();
        readings.set(Readings::Reading { hidden: count });
        let backend = explainer.backend();
        spawn_local(async move {
            let answer = explainer
                .ask(true, |worker| async move {
                    worker.compare(&image, patches, backend).await
                })
                .await;
            if ticket.is_newest() {
                readings.set(match answer {
                    Ok(comparison) => Readings::Ready {
                        hidden: count,
                        comparison,
                    },
                    Err(why) => Readings::Failed(why),
                });
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

    let curves = RwSignal::new(None::<Result<Arc<OcclusionCurves>, ExplainError>>);
    let measuring = RwSignal::new(false);
    let save_failed = RwSignal::new(false);
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
            <p data-testid="occlusion-readings" data-state=move || readings.with(|r| match r {
                Readings::Waiting => "waiting",
                Readings::Reading { .. } => "reading",
                Readings::Ready { .. } => "ready",
                Readings::Failed(_) => "failed",
            })>{move || readings.with(|r| match r {
                Readings::Waiting => "Draw a digit, then click its patches to hide them.".to_string(),
                Readings::Reading { hidden } => format!("{hidden} hidden · reading…"),
                Readings::Ready { hidden, comparison: c } => format!(
                    "{hidden} hidden · ViT reads {} · CNN reads {} · ViT with their tokens dropped reads {}",
                    reading(&c.vit),
                    reading(&c.cnn),
                    reading(&c.vit_dropped)
                ),
                Readings::Failed(why) => format!("The comparison failed: {why}."),
            })}</p>
            <div class="buttons">
                <button data-testid="occlusion-clear" on:click=move |_| hidden.set(BTreeSet::new())>"Show every patch"</button>
                <button data-testid="occlusion-measure" prop:disabled=move || measuring.get() on:click=measure>
                    {format!("Measure on {CURVE_IMAGES} test digits")}
                </button>
                <button data-testid="occlusion-csv" prop:disabled=move || !matches!(curves.get(), Some(Ok(_))) on:click=move |_| {
                    let csv = match curves.get_untracked() {
                        Some(Ok(c)) => Some(c.csv()),
                        _ => None,
                    };
                    save_failed.set(csv.is_none_or(|csv| offer_download(csv.as_bytes(), "vitlab-occlusion.csv").is_err()));
                }>"Curves as CSV"</button>
                <SaveFailed failed=save_failed />
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
