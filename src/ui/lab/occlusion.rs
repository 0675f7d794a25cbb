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

use super::question::{Answer, Question};
use crate::analysis::occlusion::{Comparison, OcclusionCurves, occlude};
use crate::data::{IMAGE_PIXELS, IMAGE_SIDE};
use crate::ui::state::{Drawing, WhenSettled};
use crate::ui::widgets::{Export, ExportButton, LineChart, Series, WhenEmpty, paint};

/// Test digits the curves are measured on: enough for a smooth curve, seconds in a worker.
const CURVE_IMAGES: u32 = 200;
const CANVAS: u32 = 168;

/// Both models' readings of an image with some patches hidden, and what was asked: the line
/// shows them, and keeps the question in its `data-` attributes, where a test reads them to
/// put the same question to `vit hide`.
#[derive(Debug, Clone, PartialEq)]
struct Hidden {
    image: [u8; IMAGE_PIXELS],
    patches: Vec<u16>,
    comparison: Comparison,
}

/// What the readings line says.
fn readings_line(answer: &Answer<Hidden>, hidden: usize) -> String {
    match answer {
        Answer::Waiting => "Draw a digit, then click its patches to hide them.".into(),
        Answer::Asking => format!("{hidden} hidden · reading…"),
        Answer::Ready(read) => read.comparison.summary(read.patches.len()),
        Answer::Failed(why) => format!("The comparison failed: {why}."),
    }
}

#[component]
pub(super) fn Occlusion(grid: usize) -> impl IntoView {
    view! {
        <div class="occlusion" data-testid="occlusion">
            <HidePatches grid=grid />
            <Curves />
            <details class="why">
                <summary>"How to read the curves"</summary>
                <p class="hint">"Test accuracy as more patches are hidden, the same pixels for both models: at random, or the ViT's most relevant first (its gradient relevance for its prediction). A flatter random curve is the more robust model. Green: the ViT with those patches' tokens dropped from its input instead of blanked, which a CNN cannot do."</p>
            </details>
        </div>
    }
}

/// The model's input with the patches clicked hidden, and both models' readings of it.
#[component]
fn HidePatches(grid: usize) -> impl IntoView {
    let drawing = expect_context::<Drawing>();
    let hidden = RwSignal::new(BTreeSet::<usize>::new());
    // The model's input once it has settled: this card repaints and asks the worker then,
    // never at every point of a stroke, whose latency the drawing feels.
    let settled = RwSignal::new(None::<[u8; IMAGE_PIXELS]>);
    let when_settled = WhenSettled::new();
    Effect::new(move |_| {
        let input = drawing
            .model_input
            .get()
            .and_then(|image| image.try_into().ok());
        // Set only when it changed: each set asks the worker for three forward passes.
        when_settled.run(move || {
            if settled.with_untracked(|shown| *shown != input) {
                settled.set(input);
            }
        });
    });
    let question = Question::<Hidden>::new();
    Effect::new(move |_| {
        let Some(image) = settled.get() else {
            question.forget();
            return;
        };
        // Patch indices below grid², which is at most 28² here.
        let patches: Vec<u16> =
            hidden.with(|h| h.iter().filter_map(|&p| u16::try_from(p).ok()).collect());
        question.ask(true, move |worker, backend| async move {
            let comparison = worker.compare(&image, patches.clone(), backend).await?;
            Ok(Hidden {
                image,
                patches,
                comparison,
            })
        });
    });
    let canvas_ref = NodeRef::<Canvas>::new();
    Effect::new(move |_| {
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        let image = settled.get().unwrap_or([0; IMAGE_PIXELS]);
        hidden.with(|hidden| paint_hidden(&canvas, &image, grid, hidden));
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
    let answer = question.answer();
    let ready = move |read: fn(&Hidden) -> String| answer.with(|a| a.ready().map(read));
    view! {
        <div class="occlusion-hide">
            <canvas node_ref=canvas_ref width=CANVAS height=CANVAS data-testid="occlusion-input" role="img"
                aria-label="the model's input; click a patch to hide it" on:click=on_click
                hidden=move || settled.with(Option::is_none)></canvas>
            <p data-testid="occlusion-readings" data-state=move || answer.with(Answer::state)
                data-image=move || ready(|r| r.image.iter().map(|b| format!("{b:02x}")).collect())
                data-hidden=move || ready(|r| r.patches.iter().map(u16::to_string).collect::<Vec<_>>().join(","))
                data-comparison=move || ready(|r| serde_json::to_string(&r.comparison).unwrap_or_default())
            >{move || answer.with(|a| readings_line(a, hidden.with(BTreeSet::len)))}</p>
            // Something to show again once a patch is hidden.
            {move || hidden.with(|h| !h.is_empty()).then(|| view! {
                <div class="buttons">
                    <button data-testid="occlusion-clear" on:click=move |_| hidden.set(BTreeSet::new())>"Show every patch"</button>
                </div>
            })}
        </div>
    }
}

/// `image` on `canvas` with the patch grid over it and the `hidden` patches tinted.
fn paint_hidden(
    canvas: &web_sys::HtmlCanvasElement,
    image: &[u8; IMAGE_PIXELS],
    grid: usize,
    hidden: &BTreeSet<usize>,
) {
    let shown = {
        let hidden: Vec<usize> = hidden.iter().copied().collect();
        occlude(image, grid, &hidden)
    };
    paint::grey_image(canvas, &shown, IMAGE_SIDE);
    let Some(ctx) = paint::context(canvas) else {
        return;
    };
    let cell = f64::from(CANVAS) / grid as f64;
    ctx.set_stroke_style_str("rgba(120, 160, 255, 0.6)");
    for i in 1..grid {
        let at = i as f64 * cell;
        ctx.stroke_rect(at, 0.0, 0.0, f64::from(CANVAS));
        ctx.stroke_rect(0.0, at, f64::from(CANVAS), 0.0);
    }
    ctx.set_fill_style_str("rgba(255, 90, 90, 0.35)");
    for &patch in hidden {
        let (row, col) = (patch / grid, patch % grid);
        ctx.fill_rect(col as f64 * cell, row as f64 * cell, cell, cell);
    }
}

/// The six lines of the occlusion curves, in the chart's colours.
fn curve_series(curves: &OcclusionCurves) -> Vec<Series> {
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
}

/// Both models' test accuracy as a growing fraction of patches is hidden, measured in the
/// explaining worker when asked.
#[component]
fn Curves() -> impl IntoView {
    let question = Question::<Arc<OcclusionCurves>>::new();
    let answer = question.answer();
    let measure = move |_: ()| {
        question.ask(true, |worker, backend| async move {
            worker.curves(CURVE_IMAGES, backend).await.map(Arc::new)
        });
    };
    // The last curves measured stay on the chart, and saveable, while they are measured again.
    let measured = Memo::new(move |last: Option<&Option<Arc<OcclusionCurves>>>| {
        answer
            .with(|a| a.ready().cloned())
            .or_else(|| last.cloned().flatten())
    });
    let series = Signal::derive(move || {
        measured
            .with(|c| c.as_deref().map(curve_series))
            .unwrap_or_default()
    });
    let is_measured = move || measured.with(Option::is_some);
    let asking = move || answer.with(|a| matches!(a, Answer::Asking));
    let when_empty = WhenEmpty::says(format!(
        "Both models' test accuracy as more and more patches are hidden: measured in a worker on {CURVE_IMAGES} test digits, in seconds."
    ))
    .with_action(
        format!("Measure on {CURVE_IMAGES} test digits"),
        "occlusion-measure",
        Callback::new(measure),
    );
    view! {
        <div class="occlusion-curves">
            {move || is_measured().then(|| view! {
                <div class="buttons">
                    <button data-testid="occlusion-measure" prop:disabled=asking on:click=move |_| measure(())>
                        "Measure again"
                    </button>
                    <ExportButton label="Curves as CSV" large=true testid="occlusion-csv" file="vitlab-occlusion.csv"
                        make=move || measured.with_untracked(|c| c.as_ref().map(|c| Export::text(c.csv()))) />
                </div>
            })}
            {move || answer.with(|a| match a {
                Answer::Failed(why) => Some(view! { <p class="error" role="alert">{format!("The measurement failed: {why}.")}</p> }.into_any()),
                Answer::Asking => Some(view! { <p class="hint">"Measuring in the explaining worker…"</p> }.into_any()),
                _ => None,
            })}
            <LineChart series=series y_range=(0.0, 1.0) x_label="% of patches hidden" testid="occlusion-chart" when_empty=when_empty />
        </div>
    }
}
