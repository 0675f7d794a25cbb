//! The latest evaluation: the confusion matrix, whose cells ask for their digits, and the
//! misclassified digits; any digit shown goes to the draw panel.

use leptos::prelude::*;

use crate::analysis::csv;
use crate::data::NUM_CLASSES;
use crate::train::{CellDigits, Mistake, TestReport};
use crate::ui::state::ShownDigit;
use crate::ui::widgets::{HeatCanvas, Palette, Sheet, SheetButtons, Tile};

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
            let TestReport { point, examples, confusion, mistakes } = report;
            view! {
                <ConfusionMatrix confusion=confusion examples=examples step=point.step on_cell=on_cell />
                <Mistakes mistakes=mistakes on_digit=on_digit />
            }
        })
    };
    let cell_view = move || {
        cell.get()
            .map(|cell| view! { <CellDigitsView cell=cell on_digit=on_digit /> })
    };
    view! {
        <div class="test-report">{matrix}</div>
        {cell_view}
    }
}

#[component]
fn ConfusionMatrix(
    /// `confusion[label][predicted]`
    confusion: Vec<Vec<usize>>,
    /// Test digits evaluated, and at which step.
    examples: usize,
    step: usize,
    on_cell: Callback<(u8, u8)>,
) -> impl IntoView {
    // The diagonal aside: the shade shows where the mistakes are.
    let max = confusion
        .iter()
        .enumerate()
        .flat_map(|(i, row)| {
            row.iter()
                .enumerate()
                .filter(move |(j, _)| *j != i)
                .map(|(_, &c)| c)
        })
        .max()
        .unwrap_or(0)
        .max(1);
    let classes = confusion.len();
    // Built when a button asks, not at each evaluation.
    let kept = StoredValue::new(confusion.clone());
    let sheet = Callback::new(move |()| {
        let counts: Vec<f32> = kept.with_value(|c| c.iter().flatten().map(|&n| n as f32).collect());
        Some(Sheet {
            title: format!(
                "Confusion on {examples} test digits (step {step}): true label by row, predicted by column, 0 to {}",
                classes.saturating_sub(1)
            ),
            tiles: vec![Tile {
                label: "the diagonal is read right; colour scaled to the largest mistake".into(),
                values: counts,
                grid: classes,
                palette: Palette::HeatFixed(0.0, max as f32),
            }],
            columns: 1,
            numbers: true,
        })
    });
    let csv = Callback::new(move |()| Some(kept.with_value(|c| csv::confusion(c))));
    view! {
        <div>
            <h3>{format!("Confusion on {examples} test digits (step {step})")} <SheetButtons sheet=sheet csv=csv name="confusion" /></h3>
            <div class="scroll-x" tabindex="0" role="region" aria-label="confusion matrix">
            <table class="confusion" data-testid="confusion-matrix">
                <tr><th>"true ↓ / predicted →"</th>{(0..NUM_CLASSES).map(|d| view! { <th>{d}</th> }).collect_view()}</tr>
                {confusion
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
    }
}

#[component]
fn Mistakes(mistakes: Vec<Mistake>, on_digit: Callback<ShownDigit>) -> impl IntoView {
    view! {
        <div>
            <h3>"Misclassified"</h3>
            <div class="samples mistakes" data-testid="mistakes">
                {mistakes
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
}

/// The digits of a cell of the matrix, as many as were sent.
#[component]
fn CellDigitsView(cell: CellDigits, on_digit: Callback<ShownDigit>) -> impl IntoView {
    let heading = format!(
        "Labelled {}, predicted {}: {} test digits at step {}{}",
        cell.label,
        cell.predicted,
        cell.total,
        cell.step,
        if cell.total > cell.indices.len() {
            format!(", the first {} shown", cell.indices.len())
        } else {
            String::new()
        }
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
}
