//! Training in the page, as the panel shows it: the plan, the controls, live charts and
//! reports. The run itself is the page's training service
//! ([`crate::ui::state::TrainingControl`], provided once with [`crate::ui::state::Training`]):
//! its worker, its lifecycle and its keeping; the panel's parts read it and ask it, and only
//! show.

mod charts;
mod controls;
mod plan_form;
mod report;
mod share_link;
mod status;
mod test_report;
mod transfers;

use leptos::prelude::*;

use crate::place::{Address, Place};
use crate::protocol::{RunState, ToTrainer};
use crate::tab_session::Event;
use crate::ui::lab::AttentionTimeline;
use crate::ui::state::{AppState, TrainingControl};
use charts::TrainingCharts;
use controls::Controls;
use plan_form::PlanForm;
use report::{Counters, DataBar};
use share_link::ShareLink;
use status::RunStatus;
use test_report::TestView;
use transfers::{RunFileButtons, WeightsButtons};

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
                    on_cell=Callback::new(move |(label, predicted)| trainer.on(Event::Ask(ToTrainer::CellDigits { label, predicted })))
                    on_digit=Callback::new(move |digit| {
                        app.drawing.shown_digit.set(Some(digit));
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
