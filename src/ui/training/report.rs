//! The run's figures: data progress, counters, the latest evaluation.

use leptos::prelude::*;

use crate::data::NUM_CLASSES;
use crate::protocol::DataProgress;
use crate::train::{CellDigits, StepReport, TestReport};
use crate::ui::{HeatCanvas, Palette, ShownDigit};

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

/// The most orange a confusion cell gets: its number stays readable on it in either theme.
const MAX_SHADE: f64 = 0.45;

/// A test digit as a button that puts it into the draw panel.
#[component]
fn TestDigitButton(
    image: Vec<u8>,
    label: u8,
    /// The caption under it.
    caption: String,
    /// Where it came from, for the draw panel's caption.
    origin: String,
    size: u32,
    on_digit: Callback<ShownDigit>,
) -> impl IntoView {
    let values: Vec<f32> = image.iter().map(|&p| p as f32).collect();
    // Starts with the caption it shows, so speech and sight name it alike.
    let title = format!("{caption}: {origin}, labelled {label}; show it in the draw panel");
    let digit = ShownDigit {
        image,
        label,
        origin,
    };
    view! {
        <button class="digit-button" title=title.clone() aria-label=title on:click=move |_| on_digit.run(digit.clone())>
            <figure>
                <HeatCanvas values=Signal::stored(values) grid=28 size=size palette=Palette::Grey />
                <figcaption>{caption}</figcaption>
            </figure>
        </button>
    }
}

/// The latest evaluation: confusion matrix and misclassified digits. A cell of the matrix
/// asks for its digits (`on_cell`), shown under it; any digit shown goes to the draw panel.
#[component]
pub(super) fn TestView(
    test: Signal<Option<TestReport>>,
    cell: Signal<Option<CellDigits>>,
    on_cell: Callback<(u8, u8)>,
    on_digit: Callback<ShownDigit>,
) -> impl IntoView {
    let matrix = move || {
        test.get().map(|report| {
            let max = report
                .confusion
                .iter()
                .enumerate()
                .flat_map(|(i, row)| row.iter().enumerate().filter(move |(j, _)| *j != i).map(|(_, &c)| c))
                .max()
                .unwrap_or(0)
                .max(1);
            view! {
                <div>
                    <h3>{format!("Confusion on {} test digits (step {})", report.examples, report.point.step)}</h3>
                    <div class="scroll-x" tabindex="0" role="region" aria-label="confusion matrix">
                    <table class="confusion" data-testid="confusion-matrix">
                        <tr><th>"true ↓ / predicted →"</th>{(0..NUM_CLASSES).map(|d| view! { <th>{d}</th> }).collect_view()}</tr>
                        {report
                            .confusion
                            .iter()
                            .enumerate()
                            .map(|(label, row)| {
                                view! {
                                    <tr>
                                        <th>{label}</th>
                                        {row
                                            .iter()
                                            .enumerate()
                                            .map(|(guess, &count)| {
                                                let shade = if guess == label { 0.0 } else { count as f64 / max as f64 };
                                                let ask = move |_| on_cell.run((label as u8, guess as u8));
                                                let what = format!("{count} test digits labelled {label} taken for {guess}: show them");
                                                view! {
                                                    <td class:diagonal=guess == label style:background=format!("rgba(224,112,32,{:.2})", MAX_SHADE * shade)>
                                                        <button data-testid=format!("confusion-cell-{label}-{guess}") aria-label=what on:click=ask>{count}</button>
                                                    </td>
                                                }
                                            })
                                            .collect_view()}
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </table>
                    </div>
                </div>
                <div>
                    <h3>"Misclassified"</h3>
                    <div class="samples mistakes" data-testid="mistakes">
                        {report
                            .mistakes
                            .iter()
                            .map(|mistake| {
                                view! {
                                    <TestDigitButton
                                        image=mistake.image.clone()
                                        label=mistake.label
                                        caption=format!("{} → {}", mistake.label, mistake.predicted)
                                        origin=format!("a test digit taken for {}", mistake.predicted)
                                        size=42
                                        on_digit=on_digit
                                    />
                                }
                            })
                            .collect_view()}
                    </div>
                </div>
            }
        })
    };
    let cell_view = move || {
        cell.get().map(|cell| {
            let heading = format!(
                "Labelled {}, predicted {}: {} test digits at step {}{}",
                cell.label,
                cell.predicted,
                cell.total,
                cell.step,
                if cell.total > cell.indices.len() { format!(", the first {} shown", cell.indices.len()) } else { String::new() }
            );
            view! {
                <div class="cell-digits" data-testid="cell-digits" data-total=cell.total.to_string()>
                    <h3>{heading}</h3>
                    <div class="samples">
                        {cell
                            .indices
                            .iter()
                            .zip(cell.images)
                            .map(|(&index, image)| {
                                view! {
                                    <TestDigitButton
                                        image=image
                                        label=cell.label
                                        caption=format!("#{index}")
                                        origin=format!("test digit #{index}")
                                        size=42
                                        on_digit=on_digit
                                    />
                                }
                            })
                            .collect_view()}
                    </div>
                </div>
            }
        })
    };
    view! {
        <div class="test-report">{matrix}</div>
        {cell_view}
    }
}
