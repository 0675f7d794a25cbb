//! The model in use: a shipped one to pick, and where the one in use came from.

use leptos::prelude::*;

use crate::shipped::{SHIPPED_MODELS, is_shipped};
use crate::ui::state::AppState;

#[component]
pub fn ModelChoice() -> impl IntoView {
    let app = expect_context::<AppState>();
    let model_source = app.model_source;
    let shipped_choice = move || {
        let source = model_source.get();
        if is_shipped(&source) {
            source
        } else {
            String::new()
        }
    };
    view! {
        <p class="model-source">
            <label>
                "Model: "
                <select data-testid="shipped-model" prop:value=shipped_choice on:change=move |ev| app.use_shipped(event_target_value(&ev))>
                    {SHIPPED_MODELS.map(|(url, label)| view! { <option value=url>{label}</option> }).collect_view()}
                    <option value="" disabled=true>"trained or loaded here"</option>
                </select>
            </label>
            " in use: " <span data-testid="model-source">{move || model_source.get()}</span>
        </p>
    }
}
