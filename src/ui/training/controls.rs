//! The run's buttons: train, pause or resume, stop, reset, and a run saved in this browser to
//! resume or discard.

use leptos::prelude::*;

use crate::protocol::{BackendKind, RunState, ToTrainer};
use crate::run_view::SavedProblem;
use crate::tab_session::Event;
use crate::ui::state::TrainingControl;

/// Only the buttons that can act now: Train; Pause or Resume while a run holds a model that
/// can go on; Stop while one runs; Reset once there is anything to reset.
#[component]
pub(super) fn Controls() -> impl IntoView {
    let trainer = expect_context::<TrainingControl>();
    let state = trainer.shown.state;
    let can_pause_or_resume = move || trainer.has_model() && state.get() != RunState::Finished;
    // A start that failed leaves its message: Reset clears it.
    let can_reset = move || {
        state.get() != RunState::Idle
            || trainer.has_worker()
            || trainer.shown.failure.with(Option::is_some)
    };
    view! {
        <div class="buttons controls">
            <button class="primary" id="train-button" data-testid="train-button" on:click=move |_| trainer.start() prop:disabled=move || trainer.running()>"Train"</button>
            {move || can_pause_or_resume().then(|| view! {
                <button data-testid="pause-button" on:click=move |_| trainer.on(Event::PauseOrResume)>
                    {move || if state.get() == RunState::Running { "Pause" } else { "Resume" }}
                </button>
            })}
            {move || trainer.running().then(|| view! {
                // Stop goes with the run it stops: the keyboard lands on Train.
                <button data-testid="stop-button" on:click=move |_| {
                    trainer.on(Event::Ask(ToTrainer::Stop));
                    crate::web::address::focus("train-button");
                }>"Stop"</button>
            })}
            {move || can_reset().then(|| view! {
                <button data-testid="reset-button" on:click=move |_| trainer.on(Event::Reset)>"Reset"</button>
            })}
            <ResumeSaved />
            <SavedRunProblem />
        </div>
    }
}

/// Offered while no run is under way in a worker, or after one failed.
#[component]
fn ResumeSaved() -> impl IntoView {
    let trainer = expect_context::<TrainingControl>();
    let shown = trainer.shown;
    move || {
        let saved = shown.saved.get()?.ok()?;
        (!trainer.running() && !trainer.has_worker() || shown.state.get() == RunState::Failed)
            .then(|| {
                let label = format!("Resume saved run (step {} of {})", saved.step, saved.total_steps);
                view! {
                    <button data-testid="resume-saved-button" on:click=move |_| trainer.on(Event::ResumeSaved(trainer.backend()))>{label}</button>
                    <button data-testid="resume-cpu-button" on:click=move |_| trainer.on(Event::ResumeSaved(Some(BackendKind::Cpu)))>"… on the CPU"</button>
                }
            })
    }
}

/// Why the run saved in this browser is not offered: a checkpoint that cannot be resumed,
/// with a way to be rid of it; or a database that could not be read now, with nothing that
/// would delete a run that may be fine.
#[component]
fn SavedRunProblem() -> impl IntoView {
    let trainer = expect_context::<TrainingControl>();
    move || {
        match trainer.shown.saved.get()?.err()? {
        SavedProblem::Damaged { why, .. } => Some(view! {
            <span class="error" data-testid="saved-run-problem" role="alert">
                "The run saved in this browser cannot be resumed: " {why.to_string()} " "
            </span>
            <button data-testid="discard-saved-button" on:click=move |_| trainer.on(Event::DiscardSaved)>"Discard it"</button>
        }.into_any()),
        SavedProblem::Unreadable(why) => Some(view! {
            <span class="error" data-testid="saved-run-unreadable" role="alert">
                {format!("The run saved in this browser could not be read just now: {why}. It is still there: reload the page to try again.")}
            </span>
        }.into_any()),
    }
    }
}
