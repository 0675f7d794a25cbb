//! Fig. 7 of the paper, live: what the weights learned and how far the heads reach.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::analysis::csv;
use crate::analysis::inference::WeightInsight;
use crate::analysis::reading::Reading;
use crate::ui::widgets::{
    Export, ExportButton, HeatCanvas, KeyEntry, Palette, Sheet, SheetButtons, Tile,
};
use crate::web;

/// Fig. 7 of the paper, live: position-embedding similarity, patch-filter components, and
/// mean attention distance per head against depth.
#[component]
pub fn AnalysisView(
    insight: Arc<WeightInsight>,
    /// The latest classification, for the distance on the current drawing.
    #[prop(into)]
    result: Signal<Option<Arc<Reading>>>,
    /// Mean distance per layer and head over a batch of test digits, once computed.
    #[prop(into)]
    batch_distance: Signal<Option<Vec<Vec<f32>>>>,
    grid: usize,
    patch_size: usize,
) -> impl IntoView {
    let drawing_distance = Signal::derive(move || result.get().map(|r| r.distances.clone()));
    let max_distance = (2.0f32).sqrt() * (grid - 1).max(1) as f32 * patch_size as f32;
    view! {
        <div class="analysis">
            <section>
                <h3>"Position embedding similarity"</h3>
                <p class="hint">"Cosine similarity of each patch's learned position embedding with every other's (the paper's Fig. 7, centre): neighbours come out alike, rows and columns show."</p>
                <PositionSimilarity insight=insight.clone() grid=grid />
            </section>
            <section>
                <h3>"Patch-embedding filters"</h3>
                <p class="hint">"Principal components of the rows of E (Fig. 7, left), with their share of the variance."</p>
                <Filters insight=insight patch_size=patch_size />
            </section>
            <section>
                <h3>"Mean attention distance"</h3>
                <p class="hint">"Per head, how far (in pixels) attention reaches, against depth (Fig. 7, right). Filled: this drawing; rings: a batch of test digits."</p>
                <DistanceChart drawing=drawing_distance batch=batch_distance max=max_distance testid="distance-chart" />
            </section>
        </div>
    }
}

/// Each patch's position embedding's similarity with every other's: a grid of grids.
#[component]
fn PositionSimilarity(insight: Arc<WeightInsight>, grid: usize) -> impl IntoView {
    let patches = grid * grid;
    // The grid of maps is built a task after the card, in the room kept for it.
    let grid_built = RwSignal::new(false);
    spawn_local(async move {
        web::next_task().await;
        grid_built.set(true);
    });
    let grid_side = grid * 28 + grid.saturating_sub(1) * 2;
    let rows = move || {
        insight
            .position_similarity
            .chunks_exact(patches.max(1))
            .map(<[f32]>::to_vec)
            .collect::<Vec<_>>()
    };
    let position_grid = {
        let rows = rows.clone();
        move || {
            rows()
                .into_iter()
                .enumerate()
                .map(|(patch, row)| view! { <HeatCanvas values=Signal::stored(row) grid=grid size=28 palette=Palette::HeatFixed(-1.0, 1.0) title=patch_name(patch, grid) /> })
                .collect_view()
        }
    };
    let sheet = Callback::new(move |()| {
        Some(Sheet {
            title: "Position embedding similarity (cosine), per patch".into(),
            tiles: rows()
                .into_iter()
                .enumerate()
                .map(|(patch, values)| Tile {
                    label: patch_name(patch, grid),
                    values,
                    grid,
                    palette: Palette::HeatFixed(-1.0, 1.0),
                })
                .collect(),
            columns: grid,
            numbers: false,
        })
    });
    view! {
        <SheetButtons sheet=sheet name="position-similarity" />
        <div class="grid-of-grids" style=format!("grid-template-columns: repeat({grid}, auto); min-height: {grid_side}px")>
            {move || grid_built.get().then(position_grid.clone())}
        </div>
    }
}

/// The principal components of the patch-embedding filters, with their share of the variance.
#[component]
fn Filters(insight: Arc<WeightInsight>, patch_size: usize) -> impl IntoView {
    let filters = insight
        .filter_components
        .iter()
        .enumerate()
        .map(|(k, (component, share))| {
            view! {
                <figure>
                    <HeatCanvas values=Signal::stored(component.clone()) grid=patch_size size=56 palette=Palette::Diverging />
                    <figcaption>{component_name(k, *share)}</figcaption>
                </figure>
            }
        })
        .collect_view();
    let sheet = Callback::new(move |()| {
        Some(Sheet {
            title: "Principal components of the patch-embedding filters".into(),
            tiles: insight
                .filter_components
                .iter()
                .enumerate()
                .map(|(k, (component, share))| Tile {
                    label: component_name(k, *share),
                    values: component.clone(),
                    grid: patch_size,
                    palette: Palette::Diverging,
                })
                .collect(),
            columns: 7,
            numbers: false,
        })
    });
    view! {
        <SheetButtons sheet=sheet name="filters" />
        <div class="filters">{filters}</div>
    }
}

/// "patch (row, column)", counted from 1.
fn patch_name(patch: usize, grid: usize) -> String {
    format!("patch ({}, {})", patch / grid + 1, patch % grid + 1)
}

/// "PC1 · 42%": the `k`th principal component (from 0) and its share of the variance.
fn component_name(k: usize, share: f32) -> String {
    format!("PC{} · {:.0}%", k + 1, 100.0 * share)
}

/// The distance chart's colours: filled dots for the drawing, rings for the test digits.
const DRAWING: &str = "#3b528b";
const BATCH: &str = "#e07020";

/// For a screen reader: each layer's range of head distances.
fn distance_summary(series: Option<Vec<Vec<f32>>>) -> String {
    let Some(series) = series.filter(|s| !s.is_empty()) else {
        return "mean attention distance: nothing yet".into();
    };
    let layers: Vec<String> = series
        .iter()
        .enumerate()
        .map(|(l, heads)| {
            let (lo, hi) = heads
                .iter()
                .fold((f32::INFINITY, 0f32), |(lo, hi), &d| (lo.min(d), hi.max(d)));
            format!("layer {}: {lo:.1} to {hi:.1} px", l + 1)
        })
        .collect();
    format!("mean attention distance per head: {}", layers.join("; "))
}

/// Scatter of distance per head against layer, as SVG: filled dots for `drawing`, rings for
/// `batch`.
#[component]
pub fn DistanceChart(
    #[prop(into)] drawing: Signal<Option<Vec<Vec<f32>>>>,
    #[prop(into)] batch: Signal<Option<Vec<Vec<f32>>>>,
    max: f32,
    #[prop(into)] testid: String,
) -> impl IntoView {
    const W: f32 = 320.0;
    const H: f32 = 200.0;
    const PAD: f32 = 32.0;
    let points = move |series: Option<Vec<Vec<f32>>>, filled: bool| {
        let series = series.unwrap_or_default();
        let layers = series.len().max(1);
        series
            .into_iter()
            .enumerate()
            .flat_map(|(l, heads)| {
                let x = PAD + (l as f32 + 0.5) * (W - PAD) / layers as f32;
                heads.into_iter().map(move |d| {
                    let y = H - PAD - (d / max).clamp(0.0, 1.0) * (H - 2.0 * PAD);
                    let (fill, stroke) = if filled { (DRAWING, "none") } else { ("none", BATCH) };
                    view! { <circle cx=x cy=y r=3.5 fill=fill stroke=stroke stroke-width=1.5></circle> }
                })
            })
            .collect_view()
    };
    let svg_ref = NodeRef::<leptos::svg::Svg>::new();
    let make_png = Callback::new(move |()| {
        let svg: web_sys::Element = svg_ref.get_untracked()?.into();
        // The series the chart shows now, not both always.
        let key: Vec<KeyEntry> = [
            (
                drawing.with_untracked(Option::is_some),
                "this drawing",
                DRAWING,
            ),
            (
                batch.with_untracked(Option::is_some),
                "a batch of test digits",
                BATCH,
            ),
        ]
        .into_iter()
        .filter(|(shown, _, _)| *shown)
        .map(|(_, label, colour)| KeyEntry {
            label: label.into(),
            colour: colour.into(),
        })
        .collect();
        let note = "mean attention distance per head, by layer".into();
        Some(Export::Chart { svg, key, note })
    });
    let make_csv = Callback::new(move |()| {
        Some(Export::text(csv::distances(
            drawing.get_untracked().as_deref(),
            batch.get_untracked().as_deref(),
        )))
    });
    view! {
        <figure class="distance-chart">
            <svg node_ref=svg_ref viewBox=format!("0 0 {W} {H}") class="chart" data-testid=testid.clone() role="img" aria-label=move || distance_summary(drawing.get().or_else(|| batch.get()))>
                <line x1=PAD y1=H - PAD x2=W y2=H - PAD stroke="#888"></line>
                <line x1=PAD y1=PAD x2=PAD y2=H - PAD stroke="#888"></line>
                <text x=PAD - 4.0 y=PAD text-anchor="end" font-size="10">{format!("{max:.0}")}</text>
                <text x=PAD - 4.0 y=H - PAD text-anchor="end" font-size="10">"0 px"</text>
                <text x=(W + PAD) / 2.0 y=H - 8.0 text-anchor="middle" font-size="11">"layer (depth)"</text>
                {move || points(batch.get(), false)}
                {move || points(drawing.get(), true)}
            </svg>
            <figcaption class="buttons">
                <ExportButton label="PNG" testid=format!("{testid}-png") file=format!("vitlab-{testid}.png") make=make_png />
                <ExportButton label="CSV" testid=format!("{testid}-csv") file=format!("vitlab-{testid}.csv") make=make_csv />
            </figcaption>
        </figure>
    }
}
