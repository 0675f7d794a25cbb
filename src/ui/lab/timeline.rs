//! The attention timeline: the probes' maps and Fig. 7's distances at each evaluation of a
//! run, to scrub through or play, so a learner sees heads go from diffuse to local and global.

use leptos::prelude::*;

use super::analysis::DistanceChart;
use crate::analysis::timeline::Timeline;
use crate::data::IMAGE_SIDE;
use crate::ui::widgets::{HeatCanvas, Palette, Sheet, SheetButtons, Tile};

/// Milliseconds each snapshot shows while playing.
const PLAY_EVERY_MS: u32 = 400;

#[component]
pub fn AttentionTimeline(
    #[prop(into)] timeline: Signal<Timeline>,
    /// The slider's `data-testid`; the rest of the view's ids take it as a prefix.
    testid: &'static str,
) -> impl IntoView {
    // `None` follows the newest snapshot as evaluations come in.
    let picked = RwSignal::new(None::<usize>);
    let count = move || timeline.with(|t| t.snapshots.len());
    let at = move || {
        picked
            .get()
            .unwrap_or(count().saturating_sub(1))
            .min(count().saturating_sub(1))
    };
    let playing = StoredValue::new_local(None::<gloo_timers::callback::Interval>);
    let play = move |_| {
        if playing.with_value(Option::is_some) {
            playing.set_value(None);
            return;
        }
        picked.set(Some(0));
        let interval = gloo_timers::callback::Interval::new(PLAY_EVERY_MS, move || {
            let next = picked.get_untracked().unwrap_or(0) + 1;
            if next >= count() {
                // At the newest: follow new evaluations again.
                picked.set(None);
                playing.set_value(None);
            } else {
                picked.set(Some(next));
            }
        });
        playing.set_value(Some(interval));
    };
    let snapshot = move || timeline.with(|t| t.snapshots.get(at()).cloned());
    let step = move || snapshot().map_or(0, |s| s.step);
    let distance = Signal::derive(move || snapshot().map(|s| s.distance));
    let max_distance = Signal::derive(move || {
        timeline.with(|t| (2.0f32).sqrt() * (t.grid.max(2) - 1) as f32 * t.patch_size as f32)
    });
    // The snapshot shown, as one figure: a row per probe (and the drawing), as on screen.
    let sheet = Callback::new(move |()| {
        let shown = picked.get_untracked();
        let snapshot = timeline.with_untracked(|t| {
            let newest = t.snapshots.len().checked_sub(1)?;
            t.snapshots
                .get(shown.unwrap_or(newest).min(newest))
                .cloned()
        })?;
        let (grid, probes) = timeline.with_untracked(|t| (t.grid, t.probes.clone()));
        let images = probes
            .into_iter()
            .enumerate()
            .map(|(p, image)| (format!("probe {}", p + 1), image))
            .chain(
                snapshot
                    .drawing
                    .clone()
                    .map(|image| ("drawing".to_string(), image)),
            );
        let mut tiles = Vec::new();
        let mut columns = 2;
        for (p, (name, image)) in images.enumerate() {
            let layers = snapshot.layers.get(p).cloned().unwrap_or_default();
            columns = columns.max(2 + layers.len());
            tiles.push(Tile {
                label: name.clone(),
                values: image.iter().map(|&v| v as f32).collect(),
                grid: IMAGE_SIDE,
                palette: Palette::Grey,
            });
            tiles.push(Tile {
                label: format!("{name} · rollout"),
                values: snapshot.rollout.get(p).cloned().unwrap_or_default(),
                grid,
                palette: Palette::Heat,
            });
            tiles.extend(layers.into_iter().enumerate().map(|(l, map)| Tile {
                label: format!("{name} · layer {}", l + 1),
                values: map,
                grid,
                palette: Palette::Heat,
            }));
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
    });
    move || {
        if count() == 0 {
            return view! { <p class="caption" data-testid=format!("{testid}-empty")>"The timeline fills at each evaluation: the probe digits' attention as the model learns."</p> }.into_any();
        }
        let (grid, probes) = timeline.with(|t| (t.grid, t.probes.clone()));
        // One row a probe: its image, its rollout, then each layer's class-token map.
        let row = move |p: usize, pixels: Vec<f32>, caption: &'static str| {
            let rollout = Signal::derive(move || {
                snapshot()
                    .and_then(|s| s.rollout.get(p).cloned())
                    .unwrap_or_default()
            });
            let layers = move || {
                snapshot()
                    .and_then(|s| s.layers.get(p).cloned())
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
        };
        let tests = probes.len();
        let rows = probes
            .into_iter()
            .enumerate()
            .map(|(p, image)| row(p, image.iter().map(|&v| v as f32).collect(), "probe"))
            .collect_view();
        // The drawing probed at the evaluation shown, as it was then.
        let drawing_row = move || {
            snapshot()
                .and_then(|s| s.drawing)
                .map(|image| row(tests, image.iter().map(|&v| v as f32).collect(), "drawing"))
        };
        view! {
            <div class="timeline">
                <div class="timeline-controls">
                    <button data-testid=format!("{testid}-play") on:click=play>"Play"</button>
                    <label>
                        <span>{move || format!("evaluation {} of {} · step {}", at() + 1, count(), step())}</span>
                        <input
                            type="range"
                            min="0"
                            max=move || count().saturating_sub(1).to_string()
                            prop:value=move || at().to_string()
                            data-testid=testid
                            data-step=move || step().to_string()
                            aria-label="evaluation shown"
                            on:input=move |ev| {
                                playing.set_value(None);
                                picked.set(event_target_value(&ev).parse().ok());
                            }
                        />
                    </label>
                </div>
                <p class="hint">"Each row: a probe digit, its attention rollout, then the class token's attention in each layer (mean of heads)." <SheetButtons sheet=sheet name=format!("{testid}-maps") /></p>
                <div class="timeline-probes">{rows} {drawing_row}</div>
                <DistanceChart drawing=distance batch=Signal::stored(None) max=max_distance.get_untracked() testid=format!("{testid}-distance") />
            </div>
        }
        .into_any()
    }
}
