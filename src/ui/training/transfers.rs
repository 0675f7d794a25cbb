//! The weights and the run as files: used in the draw panel, downloaded, uploaded.

use leptos::prelude::*;

use crate::place::{Address, Place};
use crate::protocol::{ToTrainer, WeightsPurpose};
use crate::tab_session::Event;
use crate::ui::state::TrainingControl;
use crate::ui::widgets::on_file_chosen;

#[component]
pub(super) fn WeightsButtons() -> impl IntoView {
    let trainer = expect_context::<TrainingControl>();
    let export =
        move |purpose: WeightsPurpose| trainer.on(Event::Ask(ToTrainer::ExportWeights { purpose }));
    view! {
        <div class="buttons weights">
            // The run's weights come with the run.
            {move || trainer.has_model().then(|| view! {
                <button data-testid="use-weights-button" on:click=move |_| {
                    export(WeightsPurpose::Use);
                    trainer.app().go(Address::of(Place::Draw));
                }>
                    "Draw with these weights"
                </button>
                <button data-testid="weights-download" on:click=move |_| export(WeightsPurpose::Download)>
                    "Download (.safetensors)"
                </button>
            })}
            <label class="upload">
                <span>"Load weights: "</span>
                <input
                    type="file"
                    accept=".safetensors"
                    data-testid="weights-upload"
                    on:change=on_file_chosen(
                        move |bytes, name| trainer.app().use_weights((bytes, format!("upload {name}"))),
                        move |why| trainer.refused(why),
                    )
                />
            </label>
        </div>
    }
}

#[component]
pub(super) fn RunFileButtons() -> impl IntoView {
    let trainer = expect_context::<TrainingControl>();
    view! {
        <div class="buttons run-file">
            {move || trainer.has_model().then(|| view! {
                <button data-testid="run-download" on:click=move |_| trainer.on(Event::Ask(ToTrainer::ExportRun))>
                    "Save the run (.ckpt)"
                </button>
            })}
            <label class="upload">
                <span>"Continue a run: "</span>
                <input
                    type="file"
                    accept=".ckpt"
                    data-testid="run-upload"
                    prop:disabled=move || trainer.running()
                    on:change=on_file_chosen(move |bytes, _| trainer.on(Event::ResumeFile(bytes)), move |why| trainer.refused(why))
                />
            </label>
        </div>
    }
}
