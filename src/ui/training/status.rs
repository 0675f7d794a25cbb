//! Where the run stands: its state and device, why it failed, and its notices.

use leptos::prelude::*;

use crate::ui::state::TrainingControl;

#[component]
pub(super) fn RunStatus() -> impl IntoView {
    let shown = expect_context::<TrainingControl>().shown;
    view! {
        // "idle" says nothing before a run: the state is read from the page, not shown.
        <p class="run-state" class:idle=move || shown.state.get() == crate::protocol::RunState::Idle>
            <span data-testid="run-state">{move || shown.state.get().label()}</span>
            {move || shown.backend.get().map(|b| format!(" on {}", b.label()))}
            {move || {
                let workers = shown.workers.get();
                (workers > 1).then(|| view! { <span data-testid="cpu-workers">{format!(", {workers} workers")}</span> })
            }}
            {move || shown.device_note.get().map(|note| view! { <span class="note">" — " {note.to_string()}</span> })}
        </p>
        {move || shown.fine_tunes_on.get().map(|digits| view! {
            <p class="hint" data-testid="run-fine-tunes">{format!(
                "Fine-tuning a model on {digits} of your digits (Learn my handwriting, in the lab): its plan is its own, not the form's."
            )}</p>
        })}
        {move || shown.failure.get().map(|failure| view! { <p class="error" data-testid="training-error" role="alert">{failure.to_string()}</p> })}
        <ul class="notices">
            {move || shown.notices.get().into_iter().map(|notice| view! { <li class:warning=notice.warning>{notice.message}</li> }).collect_view()}
        </ul>
    }
}
