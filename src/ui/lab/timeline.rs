//! The attention timeline: the probes' maps and Fig. 7's distances at each evaluation of a
//! run, to scrub through or play, so a learner sees heads go from diffuse to local and global.

use leptos::prelude::*;

use super::analysis::DistanceChart;
use crate::analysis::timeline::{AttentionSnapshot, Timeline};
use crate::data::IMAGE_SIDE;
use crate::ui::widgets::{HeatCanvas, Palette, Sheet, SheetButtons, Tile};

/// Milliseconds each snapshot shows while playing.
const PLAY_EVERY_MS: u32 = 400;

/// Each image a row of the timeline shows, named: the probes, then the drawing probed at
/// `snapshot`'s evaluation, as it was then.
fn row_images(probes: &[Vec<u8>], snapshot: &AttentionSnapshot) -> Vec<(String, Vec<u8>)> {
    probes
        .iter()
        .enumerate()
        .map(|(p, image)| (format!("probe {}", p + 1), image.clone()))
        .chain(
            snapshot
                .drawing
                .clone()
                .map(|image| ("drawing".to_string(), image)),
        )
        .collect()
}

/// The snapshot at `at`, as one figure: a row per probe (and the drawing), as on screen.
fn snapshot_sheet(timeline: &Timeline, at: usize) -> Option<Sheet> {
    let snapshot = timeline.snapshots.get(at)?;
    let grid = timeline.grid;
    let heat = |label: String, values: Vec<f32>| Tile {
        label,
        values,
        grid,
        palette: Palette::Heat,
    };
    let mut tiles = Vec::new();
    let mut columns = 2;
    for (p, (name, image)) in row_images(&timeline.probes, snapshot)
        .into_iter()
        .enumerate()
    {
        let layers = snapshot.layers.get(p).cloned().unwrap_or_default();
        columns = columns.max(2 + layers.len());
        tiles.push(Tile {
            label: name.clone(),
            values: image.iter().map(|&v| v as f32).collect(),
            grid: IMAGE_SIDE,
            palette: Palette::Grey,
        });
        let rollout = snapshot.rollout.get(p).cloned().unwrap_or_default();
        tiles.push(heat(format!("{name} · rollout"), rollout));
        tiles.extend(
            layers
                .into_iter()
                .enumerate()
                .map(|(l, map)| heat(format!("{name} · layer {}", l + 1), map)),
        );
    }
    Some(Sheet {
        title: format!(
            "Attention at step {}: probe, rollout, each layer's class-token map",
            snapshot.step
        ),
        tiles,
        columns,
        numbers: false,
    })
}

#[component]
pub fn AttentionTimeline(
    #[prop(into)] timeline: Signal<Timeline>,
    /// The slider's `data-testid`; the rest of the view's ids take it as a prefix.
    testid: &'static str,
) -> impl IntoView {
    // `None` follows the newest snapshot as evaluations come in.
    let picked = RwSignal::new(None::<usize>);
    // Held here, outside the view rebuilt at each evaluation, so that playing goes on.
    let playing = StoredValue::new_local(None::<gloo_timers::callback::Interval>);
    let count = Signal::derive(move || timeline.with(|t| t.snapshots.len()));
    let at = Signal::derive(move || timeline.with(|t| t.shown(picked.get())));
    let snapshot = Signal::derive(move || timeline.with(|t| t.snapshots.get(at.get()).cloned()));
    let distance = Signal::derive(move || snapshot.get().map(|s| s.distance));
    let sheet =
        Callback::new(move |()| timeline.with_untracked(|t| snapshot_sheet(t, at.get_untracked())));
    move || {
        if count.get() == 0 {
            return view! { <p class="caption" data-testid=format!("{testid}-empty")>"The timeline fills at each evaluation: the probe digits' attention as the model learns."</p> }.into_any();
        }
        let (grid, probes) = timeline.with(|t| (t.grid, t.probes.clone()));
        let tests = probes.len();
        let rows = probes
            .into_iter()
            .enumerate()
            .map(|(p, image)| view! { <ProbeRow snapshot=snapshot row=p image=image caption="probe" grid=grid /> })
            .collect_view();
        let drawing_row = move || {
            snapshot.get().and_then(|s| s.drawing).map(|image| {
                view! { <ProbeRow snapshot=snapshot row=tests image=image caption="drawing" grid=grid /> }
            })
        };
        view! {
            <div class="timeline">
                <TimelineControls picked=picked playing=playing count=count at=at step=Signal::derive(move || snapshot.get().map_or(0, |s| s.step)) testid=testid />
                <p class="hint">"Each row: a probe digit, its attention rollout, then the class token's attention in each layer (mean of heads)." <SheetButtons sheet=sheet name=format!("{testid}-maps") /></p>
                <div class="timeline-probes">{rows} {drawing_row}</div>
                <DistanceChart drawing=distance batch=Signal::stored(None) max=timeline.with_untracked(Timeline::max_distance) testid=format!("{testid}-distance") />
            </div>
        }
        .into_any()
    }
}

/// Play, and the slider that picks the evaluation shown.
#[component]
fn TimelineControls(
    picked: RwSignal<Option<usize>>,
    /// The timer stepping through the snapshots while playing.
    playing: StoredValue<Option<gloo_timers::callback::Interval>, LocalStorage>,
    count: Signal<usize>,
    at: Signal<usize>,
    step: Signal<usize>,
    testid: &'static str,
) -> impl IntoView {
    let play = move |_| {
        if playing.with_value(Option::is_some) {
            playing.set_value(None);
            return;
        }
        picked.set(Some(0));
        let interval = gloo_timers::callback::Interval::new(PLAY_EVERY_MS, move || {
            let next = picked.get_untracked().unwrap_or(0) + 1;
            if next >= count.get_untracked() {
                // At the newest: follow new evaluations again.
                picked.set(None);
                playing.set_value(None);
            } else {
                picked.set(Some(next));
            }
        });
        playing.set_value(Some(interval));
    };
    view! {
        <div class="timeline-controls">
            <button data-testid=format!("{testid}-play") on:click=play>"Play"</button>
            <label>
                <span>{move || format!("evaluation {} of {} · step {}", at.get() + 1, count.get(), step.get())}</span>
                <input
                    type="range"
                    min="0"
                    max=move || count.get().saturating_sub(1).to_string()
                    prop:value=move || at.get().to_string()
                    data-testid=testid
                    data-step=move || step.get().to_string()
                    aria-label="evaluation shown"
                    on:input=move |ev| {
                        playing.set_value(None);
                        picked.set(event_target_value(&ev).parse().ok());
                    }
                />
            </label>
        </div>
    }
}

/// One row of the timeline: an image, its rollout, then each layer's class-token map, at the
/// snapshot shown.
#[component]
fn ProbeRow(
    snapshot: Signal<Option<AttentionSnapshot>>,
    /// The row's place in the snapshot's maps.
    row: usize,
    image: Vec<u8>,
    caption: &'static str,
    grid: usize,
) -> impl IntoView {
    let pixels: Vec<f32> = image.iter().map(|&v| v as f32).collect();
    let rollout = Signal::derive(move || {
        snapshot
            .get()
            .and_then(|s| s.rollout.get(row).cloned())
            .unwrap_or_default()
    });
    let layers = move || {
        snapshot
            .get()
            .and_then(|s| s.layers.get(row).cloned())
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(l, map)| view! { <HeatCanvas values=Signal::stored(map) grid=grid size=36 title=format!("layer {}", l + 1) /> })
            .collect_view()
    };
    view! {
        <div class="timeline-probe">
            <HeatCanvas values=Signal::stored(pixels) grid=28 size=36 palette=Palette::Grey title=caption.to_string() />
            <HeatCanvas values=rollout grid=grid size=36 title="rollout".to_string() />
            <span class="timeline-layers">{layers}</span>
        </div>
    }
}
