//! Where the model looks: the class token's attention on the input, large, per layer and head.

use std::sync::Arc;

use leptos::ev::MouseEvent;
use leptos::html::Canvas;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::analysis::MapChoice;
use crate::analysis::csv;
use crate::analysis::reading::Reading;
use crate::data::IMAGE_SIDE;
use crate::model::HeadsOff;
use crate::ui::state::LabView;
use crate::ui::widgets::{
    Export, ExportButton, HeatCanvas, Palette, Sheet, SheetButtons, Tile, paint,
};
use crate::web;

use super::heads_off::HeadSwitches;

fn class_map(result: &Reading, choice: MapChoice) -> Vec<f32> {
    let layer = |l: usize| result.class_maps.get(l);
    match choice {
        MapChoice::Rollout => Some(result.rollout.clone()),
        // Each head's map, then the heads' mean.
        MapChoice::LayerMean(l) => layer(l).and_then(|maps| maps.last()).cloned(),
        MapChoice::Head(l, h) => layer(l)
            .filter(|maps| h + 1 < maps.len())
            .and_then(|maps| maps.get(h))
            .cloned(),
    }
    .unwrap_or_default()
}

/// What a screen reader says of the large map: what it shows and its strongest patches.
fn map_summary(values: &[f32], grid: usize, label: &str) -> String {
    let mut ranked: Vec<(usize, f32)> = values.iter().copied().enumerate().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    let top: Vec<String> = ranked
        .iter()
        .take(3)
        .map(|&(i, v)| {
            format!(
                "row {}, column {} ({v:.3})",
                i / grid.max(1) + 1,
                i % grid.max(1) + 1
            )
        })
        .collect();
    format!("{label}; strongest patches: {}", top.join(", "))
}

/// The heatmaps: the chosen map over the model's input, a legend, patch hover, and every
/// layer and head as small multiples.
#[component]
pub fn AttentionView(
    /// The latest classification.
    #[prop(into)]
    result: Signal<Option<Arc<Reading>>>,
    /// The 28×28 image the model saw.
    #[prop(into)]
    input: Signal<Option<Vec<u8>>>,
    /// Patches per side.
    grid: usize,
    depth: usize,
    heads: usize,
    /// The map shown large; kept by the page, so a link can set it and share it.
    choice: RwSignal<MapChoice>,
    /// The heads switched off; kept by the page, so a link can set them too.
    heads_off: RwSignal<HeadsOff>,
) -> impl IntoView {
    // The page's first paint holds the card; the maps of every layer follow a task later, so
    // that neither part holds the page for long.
    let table_built = RwSignal::new(false);
    spawn_local(async move {
        web::next_task().await;
        table_built.set(true);
    });
    view! {
        <div class="attention">
            <LargeMap result=result input=input grid=grid depth=depth choice=choice />
            // Built a task after the rest of the card, in the room kept for it (its buttons,
            // the heads' switches, a row of 56 px per layer, the rollout's button).
            <div class="map-multiples" style=format!("min-height: {}px", 150 + 56 * depth)>
                {move || table_built.get().then(|| view! { <MapMultiples result=result grid=grid depth=depth heads=heads choice=choice heads_off=heads_off /> })}
            </div>
        </div>
    }
}

/// What the large view shows, and its caption: the class-token map `choice`, or, while a
/// patch is hovered, what that patch attends to in `choice`'s layer.
fn shown_map(
    result: &Reading,
    choice: MapChoice,
    hovered: Option<usize>,
    grid: usize,
    depth: usize,
) -> (Vec<f32>, String) {
    let Some(patch) = hovered else {
        return (
            class_map(result, choice),
            format!("class token: {}", choice.label()),
        );
    };
    let layer = choice.layer(depth);
    let patches = grid * grid;
    let values = result
        .patch_maps
        .get(layer)
        .and_then(|maps| maps.get(patch * patches..(patch + 1) * patches))
        .map(<[f32]>::to_vec)
        .unwrap_or_default();
    let (row, col) = (patch / grid + 1, patch % grid + 1);
    let label = format!(
        "what patch ({row}, {col}) attends to in layer {}",
        layer + 1
    );
    (values, label)
}

/// The chosen map over the model's input, with its legend; a hovered patch shows what it
/// attends to instead.
#[component]
fn LargeMap(
    result: Signal<Option<Arc<Reading>>>,
    input: Signal<Option<Vec<u8>>>,
    grid: usize,
    depth: usize,
    choice: RwSignal<MapChoice>,
) -> impl IntoView {
    let hovered = RwSignal::new(None::<usize>);
    let image_ref = NodeRef::<Canvas>::new();
    let overlay_ref = NodeRef::<Canvas>::new();
    let legend_ref = NodeRef::<Canvas>::new();

    let shown = Memo::new(move |_| {
        let result = result.get()?;
        Some(shown_map(&result, choice.get(), hovered.get(), grid, depth))
    });
    let scale = Memo::new(move |_| shown.get().map(|(values, _)| paint::range(&values)));

    Effect::new(move |_| {
        let Some(canvas) = image_ref.get() else {
            return;
        };
        // An empty pad shows as the black square the model would see.
        let pixels = input
            .get()
            .unwrap_or_else(|| vec![0; IMAGE_SIDE * IMAGE_SIDE]);
        paint::grey_image(&canvas, &pixels, IMAGE_SIDE);
    });
    Effect::new(move |_| {
        let Some(canvas) = overlay_ref.get() else {
            return;
        };
        match (shown.get(), scale.get()) {
            (Some((values, _)), Some(range)) => paint::heatmap(&canvas, &values, grid, range, 0.6),
            _ => {
                if let Some(ctx) = paint::context(&canvas) {
                    ctx.clear_rect(0.0, 0.0, canvas.width() as f64, canvas.height() as f64);
                }
            }
        }
    });
    Effect::new(move |_| {
        if let Some(canvas) = legend_ref.get() {
            paint::legend(&canvas);
        }
    });

    let on_hover = move |event: MouseEvent| {
        let Some(canvas) = overlay_ref.get_untracked() else {
            return;
        };
        if let Some(patch) = paint::cell_at(&canvas, &event, grid) {
            hovered.set(Some(patch));
        }
    };

    view! {
        <div class="attention-main">
            <div class="stack">
                <canvas node_ref=image_ref width=280 height=280 data-testid="model-input" class="under" aria-hidden="true"></canvas>
                <canvas
                    node_ref=overlay_ref
                    width=280
                    height=280
                    class="over"
                    data-testid="attention-map"
                    role="img"
                    aria-label=move || shown.get().map(|(values, label)| map_summary(&values, grid, &label)).unwrap_or_else(|| "no drawing yet".into())
                    on:mousemove=on_hover
                    on:mouseleave=move |_| hovered.set(None)
                ></canvas>
            </div>
            <p class="caption">{move || shown.get().map(|(_, label)| label).unwrap_or_else(|| "Draw a digit on the pad: where the model looks shows here.".into())}</p>
            <div class="legend">
                <span>{move || scale.get().map(|(lo, _)| format!("{lo:.3}")).unwrap_or_default()}</span>
                <canvas node_ref=legend_ref width=160 height=12></canvas>
                <span>{move || scale.get().map(|(_, hi)| format!("{hi:.3}")).unwrap_or_default()}</span>
            </div>
            <div class="buttons">
                <ExportButton label="PNG" testid="attention-map-png" file="vitlab-attention-map.png"
                    ready=Signal::derive(move || shown.with(Option::is_some)) make=move || {
                    let (under, over) = image_ref.get_untracked().zip(overlay_ref.get_untracked())?;
                    paint::stacked(&under, &over).map(Export::Canvas)
                } />
                <ExportButton label="CSV" testid="attention-map-csv" file="vitlab-attention-map.csv"
                    ready=Signal::derive(move || shown.with(Option::is_some)) make=move || {
                    shown.get_untracked().map(|(values, label)| Export::text(csv::map(&values, grid, &label)))
                } />
            </div>
            <p class="hint">"Hover a patch to see where it looks. The model sees the 28×28 image underneath."</p>
        </div>
    }
}

/// Every layer's and head's map, small, to pick the one shown large or to switch a head off.
#[component]
fn MapMultiples(
    result: Signal<Option<Arc<Reading>>>,
    grid: usize,
    depth: usize,
    heads: usize,
    choice: RwSignal<MapChoice>,
    heads_off: RwSignal<HeadsOff>,
) -> impl IntoView {
    // Kept by the page: Draw opened again goes on as it was left.
    let switching = expect_context::<LabView>().heads_switching;
    // A layer's row of maps at a time, each in a task of its own: building all of them at
    // once held a phone's page for a fifth of a second. The cells keep their size meanwhile.
    let rows_built = RwSignal::new(0usize);
    spawn_local(async move {
        for row in 1..=depth {
            web::next_task().await;
            rows_built.set(row);
        }
    });
    let thumb = move |pick: MapChoice| {
        let values = Signal::derive(move || {
            result
                .get()
                .map(|r| class_map(&r, pick))
                .unwrap_or_default()
        });
        let head = match pick {
            MapChoice::Head(l, h) => Some((l, h)),
            _ => None,
        };
        let off = move || head.is_some_and(|(l, h)| heads_off.with(|o| o.contains(l, h)));
        let click = move |_| match head {
            Some((l, h)) if switching.get_untracked() => heads_off.update(|o| *o = o.toggled(l, h)),
            _ => choice.set(pick),
        };
        view! {
            <button
                class="thumb"
                class:selected=move || choice.get() == pick
                class:off=off
                data-head=head.map(|(l, h)| format!("{}.{}", l + 1, h + 1))
                aria-pressed=move || head.filter(|_| switching.get()).map(|_| off().to_string())
                title=move || if off() { format!("{} (switched off)", pick.label()) } else { pick.label() }
                on:click=click
            >
                <HeatCanvas values=values grid=grid size=48 />
            </button>
        }
    };

    let sheet = Callback::new(move |()| {
        let result = result.get_untracked()?;
        let picks = (0..depth)
            .flat_map(|l| {
                std::iter::once(MapChoice::LayerMean(l))
                    .chain((0..heads).map(move |h| MapChoice::Head(l, h)))
            })
            .chain(std::iter::once(MapChoice::Rollout));
        Some(Sheet {
            title:
                "The class token's attention: each layer's mean of heads, each head, and rollout"
                    .into(),
            tiles: picks
                .map(|pick| Tile {
                    label: pick.label(),
                    values: class_map(&result, pick),
                    grid,
                    palette: Palette::Heat,
                })
                .collect(),
            columns: heads + 1,
            numbers: false,
        })
    });
    view! {
        <SheetButtons sheet=sheet name="attention-maps" ready=Signal::derive(move || result.with(Option::is_some)) />
        <HeadSwitches switching=switching />
        <div class="multiples scroll-x" tabindex="0" role="region" aria-label="every layer's and head's map">
            <table>
                <thead>
                    <tr>
                        <th>"layer"</th>
                        <th>"mean"</th>
                        {(0..heads).map(|h| view! { <th>{format!("h{}", h + 1)}</th> }).collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {(0..depth)
                        .map(|l| {
                            let built = Memo::new(move |_| rows_built.get() > l);
                            view! {
                                <tr>
                                    <th>{format!("L{}", l + 1)}</th>
                                    <td>{move || built.get().then(|| thumb(MapChoice::LayerMean(l)))}</td>
                                    {(0..heads).map(|h| view! { <td>{move || built.get().then(|| thumb(MapChoice::Head(l, h)))}</td> }).collect_view()}
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
            <button class="rollout" class:selected=move || choice.get() == MapChoice::Rollout on:click=move |_| choice.set(MapChoice::Rollout)>
                "Attention rollout"
            </button>
        </div>
    }
}
