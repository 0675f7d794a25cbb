//! Training in the page: the plan, the controls, live charts and reports. The model trains in
//! a Web Worker ([`crate::web::TrainerWorker`]); this panel only sends commands and shows
//! what comes back.
//!
//! The panel's parts share its [`trainer::TrainingControl`] through context: the worker, and the
//! run's state (`crate::run_view::RunView`) in a Leptos store.

mod charts;
mod controls;
mod plan_choice;
mod plan_form;
mod report;
mod share_link;
mod shown;
mod status;
mod test_report;
mod trainer;
mod transfers;

use leptos::prelude::*;

use crate::protocol::ToTrainer;
use crate::train::TrainingPlan;
use crate::ui::lab::AttentionTimeline;
use crate::ui::state::{AppState, Below};
use charts::TrainingCharts;
use controls::Controls;
use plan_form::PlanForm;
use report::{Counters, DataBar};
use share_link::ShareLink;
use status::RunStatus;
use test_report::TestView;
use trainer::TrainingControl;
use transfers::{RunFileButtons, WeightsButtons};

/// The training panel.
#[component]
pub fn TrainingPanel(
    /// The plan a link set, already checked.
    initial_plan: Option<TrainingPlan>,
) -> impl IntoView {
    let app = expect_context::<AppState>();
    let trainer = TrainingControl::new(app, initial_plan);
    provide_context(trainer);
    let shown = trainer.shown;
    // Its figures and reports come a task after its plan and controls (the page brings itself
    // in a part at a time, `Below`).
    let reports = app.revealed.when(Below::TrainingReports);
    view! {
        <section class="card training" data-testid="training-panel">
            <h2>"Train it yourself"</h2>
            <PlanForm />
            <ShareLink />
            <Controls />
            <RunStatus />
            {move || reports.get().then(|| view! {
                <DataBar data=shown.data.into() samples=shown.samples.into() />
                <Counters report=shown.report.into() test=shown.test.into() />
                <TrainingCharts />
                <h3>"Attention as it learns"</h3>
                <AttentionTimeline timeline=shown.timeline testid="attention-timeline" />
                <TestView
                    test=shown.test.into()
                    cell=shown.cell.into()
                    on_cell=Callback::new(move |(label, predicted)| trainer.send(ToTrainer::CellDigits { label, predicted }))
                    on_digit=Callback::new(move |digit| app.shown_digit.set(Some(digit)))
                />
                <WeightsButtons />
                <RunFileButtons />
                <p class="caption">
                    "Weights are safetensors with the seed's PyTorch names and the config in the metadata: "
                    "load them with the seed's code, or load a file saved by it here. "
                    "A run file adds AdamW's moments and the run's state: "
                    "`vit train --resume-from FILE` continues it on the command line, and this page continues one `vit train` wrote."
                </p>
            })}
        </section>
    }
}
