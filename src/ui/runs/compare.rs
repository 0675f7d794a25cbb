//! The compared runs' curves, overlaid, each run in its own colour.

use leptos::prelude::*;

use super::table::RunsTable;
use crate::run_record::RunRecord;
use crate::ui::state::AppState;
use crate::ui::widgets::{LineChart, Series};

/// Colours of compared runs, by CSS class `run-0` … (then again).
const RUN_CLASSES: [&str; 6] = ["run-0", "run-1", "run-2", "run-3", "run-4", "run-5"];

#[component]
pub(super) fn CompareCharts() -> impl IntoView {
    let records = expect_context::<AppState>().keeper.records;
    let selected = expect_context::<RunsTable>().selected;
    let compared = move || {
        records.with(|all| {
            selected.with(|chosen| {
                all.iter()
                    .filter(|r| chosen.contains(&r.id))
                    .cloned()
                    .collect::<Vec<_>>()
            })
        })
    };
    // One line a compared run, in its own colour.
    let series_of =
        move |name: &'static str, dots: bool, points: fn(&RunRecord) -> Vec<(f64, f64)>| {
            Signal::derive(move || {
                compared()
                    .iter()
                    .enumerate()
                    .map(|(i, r)| Series {
                        label: format!("{} {name}", crate::run_store::short_name(r.id)),
                        class: RUN_CLASSES[i % RUN_CLASSES.len()],
                        points: points(r),
                        dots,
                    })
                    .collect()
            })
        };
    let loss_series = series_of("loss", false, |r| {
        r.history
            .steps
            .iter()
            .map(|p| (p.step as f64, p.smoothed_loss as f64))
            .collect()
    });
    let accuracy_series = series_of("test", true, |r| {
        r.history
            .evals
            .iter()
            .map(|p| (p.step as f64, p.accuracy as f64))
            .collect()
    });
    view! {
        <div class="charts">
            <LineChart testid="compare-chart" x_label="step" series=loss_series />
            <LineChart testid="compare-accuracy" x_label="step" y_range=(0.0, 1.0) series=accuracy_series />
        </div>
    }
}
