//! The run's loss and accuracy as it trains.

use leptos::prelude::*;

use crate::ui::state::TrainingControl;
use crate::ui::widgets::{LineChart, Series, WhenEmpty};

#[component]
pub(super) fn TrainingCharts() -> impl IntoView {
    let history = expect_context::<TrainingControl>().shown.history;
    view! {
        <div class="charts">
            <LineChart
                testid="loss-chart"
                x_label="step"
                when_empty=WhenEmpty::says("The loss, step by step, from the first steps on.")
                series=Signal::derive(move || {
                    history.with(|h| {
                        vec![
                            Series { label: "loss".into(), class: "raw", points: h.steps.iter().map(|p| (p.step as f64, p.loss as f64)).collect(), dots: false },
                            Series { label: "smoothed".into(), class: "smooth", points: h.steps.iter().map(|p| (p.step as f64, p.smoothed_loss as f64)).collect(), dots: false },
                        ]
                    })
                })
            />
            <LineChart
                testid="accuracy-chart"
                x_label="step"
                when_empty=WhenEmpty::says("The accuracy, on the batches and at each evaluation on test digits.")
                y_range=(0.0, 1.0)
                series=Signal::derive(move || {
                    history.with(|h| {
                        vec![
                            Series { label: "train (smoothed)".into(), class: "smooth", points: h.steps.iter().map(|p| (p.step as f64, p.accuracy as f64)).collect(), dots: false },
                            Series { label: "test".into(), class: "test", points: h.evals.iter().map(|p| (p.step as f64, p.accuracy as f64)).collect(), dots: true },
                        ]
                    })
                })
            />
        </div>
    }
}
