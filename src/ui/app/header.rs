//! The page's header: its name, and where the model runs.

use leptos::prelude::*;

use crate::ui::state::AppState;

#[component]
pub(super) fn Header() -> impl IntoView {
    let host = expect_context::<AppState>().host;
    let engine = host.engine;
    view! {
        <header>
            <div>
                <h1>"vitlab"</h1>
                <p class="tagline">"A Vision Transformer in your browser: draw a digit and watch where it looks."</p>
            </div>
            // Its lines are reserved and each holds one line (the whole text on hover): a note
            // arriving while someone draws must not move the pad under the pen.
            <div class="backend">
                <span>
                    <span data-testid="backend">
                        {move || engine.with(|e| e.as_ref().map(|e| e.backend.label()).unwrap_or("starting…"))}
                    </span>
                    {move || engine.with(|e| e.is_some()).then(|| view! { " · " <span data-testid="model-ready" class="ready">"model ready"</span> })}
                </span>
                {move || host.note.get().map(|note| view! { <span class="note" data-testid="backend-note" title=note.clone()>{note.clone()}</span> })}
                {move || host.timings.get().map(|timings| view! { <span class="note" data-testid="backend-timings" title=timings.clone()>{timings.clone()}</span> })}
            </div>
        </header>
    }
}
