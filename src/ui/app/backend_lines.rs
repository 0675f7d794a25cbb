//! Where the model runs, in the page's header: `index.html` holds the header itself (the
//! page's name and tagline, painted before the app arrives and never replaced, so the first
//! paint is the largest), and the app fills in its backend lines.

use leptos::portal::Portal;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::ui::BACKEND_LINES;
use crate::ui::state::AppState;

#[component]
pub(super) fn BackendLines() -> impl IntoView {
    let app = expect_context::<AppState>();
    let host = app.host;
    let engine = host.engine;
    // Until a model is in, what the page is doing (loading, warming up) stands in its place.
    let backend = move || {
        engine
            .with(|e| e.as_ref().map(|e| e.backend.label().to_string()))
            .unwrap_or_else(|| app.status.get())
    };
    let lines = move || {
        view! {
            <span>
                <span data-testid="backend">{backend}</span>
                {move || engine.with(|e| e.is_some()).then(|| view! { " · " <span data-testid="model-ready" class="ready">"model ready"</span> })}
            </span>
            {move || host.note.get().map(|note| note.to_string()).map(|note| view! { <span class="note" data-testid="backend-note" title=note.clone()>{note.clone()}</span> })}
            {move || host.timings.get().map(|timings| timings.to_string()).map(|timings| view! { <span class="note" data-testid="backend-timings" title=timings.clone()>{timings.clone()}</span> })}
        }
    };
    // Its lines are reserved and each holds one line (the whole text on hover): a note
    // arriving while someone draws must not move the pad under the pen.
    let place = leptos::prelude::document()
        .get_element_by_id(BACKEND_LINES)
        .map(|element| element.unchecked_into::<web_sys::Element>());
    match place {
        Some(place) => view! { <Portal mount=place>{lines}</Portal> }.into_any(),
        // A page without index.html's header (the browser tests' mounts) shows them in place.
        None => view! { <div class="backend">{lines}</div> }.into_any(),
    }
}
