//! The run's figures: data progress and counters.

use leptos::prelude::*;

use crate::protocol::DataProgress;
use crate::train::{StepReport, TestReport};
use crate::ui::widgets::{HeatCanvas, Palette};

fn clock(seconds: f64) -> String {
    if !seconds.is_finite() {
        return "–".into();
    }
    let total = seconds.round() as u64;
    format!("{}:{:02}", total / 60, total % 60)
}

/// Download progress and a few of the digits that arrived.
#[component]
pub(super) fn DataBar(
    data: Signal<DataProgress>,
    samples: Signal<Vec<(Vec<u8>, u8)>>,
) -> impl IntoView {
    view! {
        <div class="data">
            <progress
                data-testid="data-progress"
                aria-label="MNIST downloaded"
                max="1"
                prop:value=move || data.get().fraction()
                data-value=move || format!("{:.4}", data.get().fraction())
            ></progress>
            <span class="caption">
                {move || {
                    let d = data.get();
                    if d.total_chunks == 0 {
                        return "MNIST is fetched when training starts".to_string();
                    }
                    format!(
                        "data: {} / {} chunks, {:.1} / {:.1} MB, {} / {} images{}",
                        d.chunks,
                        d.total_chunks,
                        d.bytes as f64 / 1e6,
                        d.total_bytes as f64 / 1e6,
                        d.images,
                        d.total_images,
                        if d.cached_chunks > 0 { format!(" ({} from the browser cache)", d.cached_chunks) } else { String::new() }
                    )
                }}
            </span>
            <div class="samples" data-testid="samples">
                {move || {
                    samples
                        .get()
                        .into_iter()
                        .map(|(image, label)| {
                            let values: Vec<f32> = image.iter().map(|&p| p as f32).collect();
                            view! {
                                <figure>
                                    <HeatCanvas values=Signal::stored(values) grid=28 size=28 palette=Palette::Grey />
                                    <figcaption>{label}</figcaption>
                                </figure>
                            }
                        })
                        .collect_view()
                }}
            </div>
        </div>
    }
}

/// Step, epoch, speed, time, loss and accuracy as numbers.
#[component]
pub(super) fn Counters(
    report: Signal<Option<StepReport>>,
    test: Signal<Option<TestReport>>,
) -> impl IntoView {
    let with = move |f: fn(&StepReport) -> String| {
        move || report.with(|r| r.as_ref().map(f).unwrap_or_else(|| "–".into()))
    };
    view! {
        <dl class="counters">
            <div><dt>"step"</dt><dd><span data-testid="training-step">{move || report.with(|r| r.as_ref().map_or(0, |r| r.point.step))}</span>{with(|r| format!(" / {}", r.total_steps))}</dd></div>
            <div><dt>"epoch"</dt><dd data-testid="training-epoch">{with(|r| format!("{} / {}", r.epoch, r.epochs))}</dd></div>
            <div><dt>"loss (smoothed)"</dt><dd data-testid="train-loss">{with(|r| format!("{:.4}", r.point.smoothed_loss))}</dd></div>
            <div><dt>"train accuracy"</dt><dd>{with(|r| format!("{:.1}%", 100.0 * r.point.accuracy))}</dd></div>
            <div><dt>"test accuracy"</dt><dd data-testid="test-accuracy">{move || test.with(|t| t.as_ref().map(|t| format!("{:.2}%", 100.0 * t.point.accuracy)).unwrap_or_else(|| "–".into()))}</dd></div>
            <div><dt>"images/s"</dt><dd data-testid="images-per-second">{with(|r| format!("{:.0}", r.images_per_second))}</dd></div>
            <div><dt>"elapsed"</dt><dd>{with(|r| clock(r.seconds))}</dd></div>
            <div><dt>"left"</dt><dd>{with(|r| clock(r.seconds_left))}</dd></div>
            <div><dt>"learning rate"</dt><dd>{with(|r| format!("{:.2e}", r.lr))}</dd></div>
        </dl>
    }
}
