//! Which heads matter: the accuracy each head's absence costs on some test digits, measured
//! when asked in a worker of the card's own (the page's binary on the CPU, like the drawing
//! worker, but never the one the lab draws with), as a heat table whose cells switch that head
//! off in the lab. Not the explaining worker: its binary, which Train also fetches, is held to
//! 3 MB, and the page's binary already holds heads switched off.

use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::heads_off::replaced_by;
use super::question::Answer;
use crate::analysis::ablation::{HeadImportance, PAGE_IMPORTANCE_IMAGES, PAGE_MEAN_IMAGES};
use crate::model::{HeadsOff, Replacement};
use crate::protocol::BackendKind;
use crate::ui::state::{ExplainError, LabView, ModelHost};
use crate::ui::widgets::{Export, ExportButton, paint, thousands};
use crate::web::{DrawingWorker, KeptWorker};

/// Test digits a person may measure on.
const IMAGE_CHOICES: [u32; 5] = [100, 200, 500, 1000, 2500];
/// A cell of the table and the room for the labels, in SVG units.
const CELL_W: f64 = 44.0;
const CELL_H: f64 = 28.0;
const LEFT: f64 = 54.0;
const TOP: f64 = 22.0;

/// The card's body: the choices, the measurement and the table.
#[component]
pub(super) fn HeadsMatter(depth: usize, heads: usize) -> impl IntoView {
    let heads_off = expect_context::<LabView>().heads_off;
    let host = expect_context::<ModelHost>();
    let answer = RwSignal::new(Answer::<Arc<HeadImportance>>::Waiting);
    let measurer: Measurer = StoredValue::new_local(KeptWorker::default());
    let images = RwSignal::new(PAGE_IMPORTANCE_IMAGES as u32);
    let measure = move |_| {
        let zero = heads_off.get_untracked().replacement == Replacement::Zero;
        let count = images.get_untracked();
        answer.set(Answer::Asking);
        spawn_local(async move {
            answer.set(match measure_heads(host, measurer, count, zero).await {
                Ok(importance) => Answer::Ready(Arc::new(importance)),
                Err(why) => Answer::Failed(why),
            });
        });
    };
    // The last table measured stays, and saveable, while it is measured again.
    let measured = Memo::new(move |last: Option<&Option<Arc<HeadImportance>>>| {
        answer
            .with(|a| a.ready().cloned())
            .or_else(|| last.cloned().flatten())
    });
    let svg_ref = NodeRef::<leptos::svg::Svg>::new();
    let make_png = Callback::new(move |()| {
        let svg: web_sys::Element = svg_ref.get_untracked()?.into();
        let note = measured.with_untracked(|m| m.as_deref().map(caption))?;
        Some(Export::Chart {
            svg,
            key: Vec::new(),
            note,
        })
    });
    let ready = Signal::derive(move || measured.with(Option::is_some));
    let choose = move |event| {
        if let Ok(count) = event_target_value(&event).parse() {
            images.set(count);
        }
    };
    view! {
        <p>"The test accuracy the model loses when one head alone is switched off."</p>
        <details class="why">
            <summary>"How it is measured"</summary>
            <p class="hint">{format!(
                "A head's output is replaced by its mean output over {} test digits, or by zero (the choice above the heads' maps in Draw). Red: the model needed it; blue: it did better without. A cell switches that head off in the lab.",
                thousands(PAGE_MEAN_IMAGES)
            )}</p>
        </details>
        <div class="buttons" data-testid="heads-matter" data-state=move || answer.with(Answer::state)>
            <label>
                "on the first "
                <select data-testid="heads-matter-images" on:change=choose>
                    {IMAGE_CHOICES.map(|n| view! { <option value=n.to_string() selected=n == PAGE_IMPORTANCE_IMAGES as u32>{n.to_string()}</option> }).collect_view()}
                </select>
                " test digits "
            </label>
            <button data-testid="heads-matter-measure" prop:disabled=move || answer.with(|a| matches!(a, Answer::Asking)) on:click=measure>"Measure"</button>
            <ExportButton label="PNG" testid="heads-matter-png" file="vitlab-heads-matter.png" ready=ready make=make_png />
            <ExportButton label="CSV" testid="heads-matter-csv" file="vitlab-heads-matter.csv" ready=ready
                make=move || measured.with_untracked(|m| m.as_ref().map(|m| Export::text(m.csv()))) />
        </div>
        {move || answer.with(|a| match a {
            Answer::Failed(why) => Some(view! { <p class="error" role="alert">{format!("The measurement failed: {why}.")}</p> }.into_any()),
            Answer::Asking => Some(view! { <p class="hint">"Measuring in a worker of its own, on the CPU: every head switched off in turn…"</p> }.into_any()),
            _ => None,
        })}
        <p class="caption" data-testid="heads-matter-caption">{move || measured.with(|m| m.as_deref().map(caption))}</p>
        // Until it is measured, the table says what fills it instead of showing an empty grid.
        {move || (!ready.get() && !answer.with(|a| matches!(a, Answer::Asking))).then(|| view! {
            <div class="chart-empty">
                <p>{move || format!("Press Measure: each of the {} heads is switched off alone on the test digits, in seconds, and the accuracy it costs fills a table of {depth} layers × {heads} heads.", depth * heads)}</p>
            </div>
        })}
        <svg node_ref=svg_ref class="heat-table" data-testid="heads-matter-table" hidden=move || !ready.get()
            viewBox=format!("0 0 {} {}", LEFT + CELL_W * heads as f64 + 4.0, TOP + CELL_H * depth as f64 + 4.0)
            role="group" aria-label=move || measured.with(|m| m.as_deref().map(summary).unwrap_or_else(|| "not measured yet".into()))>
            {(0..heads).map(|h| view! { <text class="tick" x=LEFT + CELL_W * (h as f64 + 0.5) y=TOP - 7.0 text-anchor="middle">{format!("h{}", h + 1)}</text> }).collect_view()}
            {(0..depth).map(|l| view! { <text class="tick" x=LEFT - 8.0 y=TOP + CELL_H * (l as f64 + 0.5) + 4.0 text-anchor="end">{format!("layer {}", l + 1)}</text> }).collect_view()}
            {move || measured.get().map(|m| cells(&m, heads_off))}
        </svg>
    }
}

/// The card's worker and the weights it holds.
type Measurer = StoredValue<KeptWorker<DrawingWorker>, LocalStorage>;

/// Which heads matter for the weights in use, in the card's worker (started, and given the
/// weights, on first use and for other weights).
async fn measure_heads(
    host: ModelHost,
    measurer: Measurer,
    count: u32,
    zero: bool,
) -> Result<HeadImportance, ExplainError> {
    let weights = host.weights.get_value().ok_or(ExplainError::NoWeights)?;
    let start = || DrawingWorker::spawn(BackendKind::Cpu).map_err(ExplainError::from);
    let give = |worker: Rc<DrawingWorker>, weights: Rc<Vec<u8>>| async move {
        worker
            .load(&weights)
            .await
            .map(drop)
            .map_err(ExplainError::from)
    };
    let worker = measurer
        .get_value()
        .with_weights(&weights, start, give)
        .await?;
    Ok(worker.heads(count, zero).await?)
}

/// One cell per head: its colour and the points lost.
fn cells(importance: &HeadImportance, off: RwSignal<HeadsOff>) -> impl IntoView + use<> {
    let lost = importance.lost();
    let scale = lost.iter().flatten().fold(1e-6f32, |m, v| m.max(v.abs()));
    lost.into_iter()
        .enumerate()
        .flat_map(|(l, row)| row.into_iter().enumerate().map(move |(h, v)| (l, h, v)))
        .map(|(l, h, v)| {
            let (x, y) = (LEFT + CELL_W * h as f64, TOP + CELL_H * l as f64);
            let switch = move || off.update(|o| *o = o.toggled(l, h));
            let key = move |event: leptos::ev::KeyboardEvent| {
                if event.key() == "Enter" || event.key() == " " {
                    event.prevent_default();
                    switch();
                }
            };
            let pressed = move || off.with(|o| o.contains(l, h)).to_string();
            view! {
                <g class="cell" role="button" tabindex="0" aria-pressed=pressed
                    aria-label=format!("layer {}, head {}: {:.2} points lost; switch it off in the lab", l + 1, h + 1, 100.0 * v)
                    on:click=move |_| switch() on:keydown=key>
                    <rect x=x y=y width=CELL_W - 2.0 height=CELL_H - 2.0 fill=paint::diverging_fill(v / scale)
                        class:off=move || off.with(|o| o.contains(l, h))>
                        <title>{format!("layer {}, head {}: {:.2} points lost (a click switches it off)", l + 1, h + 1, 100.0 * v)}</title>
                    </rect>
                    <text class="value" x=x + CELL_W / 2.0 - 1.0 y=y + CELL_H / 2.0 + 3.0 text-anchor="middle">{format!("{:.1}", 100.0 * v)}</text>
                </g>
            }
        })
        .collect_view()
}

/// What was measured, under the table and the picture.
fn caption(importance: &HeadImportance) -> String {
    let by = replaced_by(importance.replacement);
    format!(
        "{} test digits, {:.1}% with every head; points lost with one head replaced by {by}",
        importance.images,
        100.0 * importance.baseline
    )
}

/// What a screen reader says of the table: the heads that cost the most.
fn summary(importance: &HeadImportance) -> String {
    let mut ranked: Vec<(usize, usize, f32)> = importance
        .lost()
        .iter()
        .enumerate()
        .flat_map(|(l, row)| row.iter().enumerate().map(move |(h, v)| (l, h, *v)))
        .collect();
    ranked.sort_by(|a, b| b.2.total_cmp(&a.2));
    let top: Vec<String> = ranked
        .iter()
        .take(3)
        .map(|(l, h, v)| format!("layer {} head {} ({:.1} points)", l + 1, h + 1, 100.0 * v))
        .collect();
    format!(
        "{}; the heads that cost most: {}",
        caption(importance),
        top.join(", ")
    )
}
