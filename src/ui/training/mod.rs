//! Training in the page: the plan, the controls, live charts and reports. The model trains in
//! a Web Worker ([`crate::web::TrainerWorker`]); this panel only sends commands and shows
//! what comes back.
//!
//! The panel's parts share its [`trainer::TrainingControl`] through context, provided once for
//! the page ([`provide_training`]): the worker, and the run's state
//! (`crate::run_view::RunView`) in a Leptos store.

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

use crate::place::{Address, Place};
use crate::protocol::{RunState, ToTrainer};
use crate::train::TrainingPlan;
use crate::ui::lab::AttentionTimeline;
use crate::ui::state::{AppState, Training};
use charts::TrainingCharts;
use controls::Controls;
use plan_form::PlanForm;
use report::{Counters, DataBar};
use share_link::ShareLink;
use status::RunStatus;
use test_report::TestView;
use trainer::TrainingControl;
use transfers::{RunFileButtons, WeightsButtons};

/// Training as a service of the page: its worker, the run's view and what the panel's buttons
/// do, provided once (the worker starts on the first Train, never before), so that a run goes
/// on while another place is shown and the panel finds it as it was. Other cards ask it through
/// [`Training`], and await its answers.
pub fn provide_training(app: AppState, initial_plan: Option<TrainingPlan>) {
    let (training, requests) = Training::new();
    provide_context(training);
    provide_context(TrainingControl::new(app, initial_plan, requests));
}

/// Whether a run is under way in this tab (for the navigation bar's mark).
pub fn training_now() -> Signal<bool> {
    match use_context::<TrainingControl>() {
        Some(trainer) => Signal::derive(move || trainer.running()),
        None => Signal::stored(false),
    }
}

/// The training panel.
#[component]
pub fn TrainingPanel() -> impl IntoView {
    let app = expect_context::<AppState>();
    let trainer = expect_context::<TrainingControl>();
    let shown = trainer.shown;
    // Before any run there is nothing to chart: the panel says what a run shows instead.
    let has_run = Memo::new(move |_| {
        shown.state.get() != RunState::Idle || shown.history.with(|h| !h.steps.is_empty())
    });
    view! {
        <section class="card training" data-testid="training-panel">
            <h2>"Train it yourself"</h2>
            <PlanForm />
            <Controls />
            <RunStatus />
            {move || (!has_run.get()).then(|| view! {
                <div class="before-a-run" data-testid="before-a-run">
                    <p>"Press " <strong>"Train"</strong> ": MNIST downloads in chunks while the first steps run, the loss and the accuracy fill in here, and the model's attention on your drawing changes as it learns. It trains in a worker of its own: the run goes on while you draw or look elsewhere."</p>
                </div>
            })}
            {move || has_run.get().then(|| view! {
                <DataBar data=shown.data.into() samples=shown.samples.into() />
                <Counters report=shown.report.into() test=shown.test.into() />
                <TrainingCharts />
                <h3>"Attention as it learns"</h3>
                <AttentionTimeline timeline=shown.timeline testid="attention-timeline" />
                <TestView
                    test=shown.test.into()
                    cell=shown.cell.into()
                    on_cell=Callback::new(move |(label, predicted)| trainer.send(ToTrainer::CellDigits { label, predicted }))
                    on_digit=Callback::new(move |digit| {
                        app.shown_digit.set(Some(digit));
                        app.go(Address::of(Place::Draw));
                    })
                />
            })}
            <h3>"Weights and runs as files"</h3>
            <WeightsButtons />
            <RunFileButtons />
            <details class="why">
                <summary>"What are these files?"</summary>
                <p class="caption">
                    "Weights are safetensors with the seed's PyTorch names and the config in the metadata: "
                    "load them with the seed's code, or load a file saved by it here. "
                    "A run file adds AdamW's moments and the run's state: "
                    "`vit train --resume-from FILE` continues it on the command line, and this page continues one `vit train` wrote."
                </p>
            </details>
            <ShareLink />
        </section>
    }
}
