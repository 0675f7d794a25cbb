//! A link to this experiment: the plan, the device, the model and the map, in the query.

use leptos::prelude::*;

use crate::place::{Address, Place};
use crate::share::{Experiment, View};
use crate::ui::state::{AppState, TrainingControl};

#[component]
pub(super) fn ShareLink() -> impl IntoView {
    let app = expect_context::<AppState>();
    let plan = expect_context::<TrainingControl>().plan;
    let href = move || {
        let query = Experiment::query(
            &plan.form.get(),
            (plan.backend.get(), plan.cpu_workers),
            &View {
                map: app.view.map.get(),
                heads_off: app.view.heads_off.get(),
            },
            app.model_url.get().as_deref(),
        );
        // The plan is read in Train.
        format!("?{query}{}", Address::of(Place::Train).fragment())
    };
    view! {
        <p class="share">
            <a data-testid="share-link" href=href>"Link to this experiment"</a>
            " — the plan with its seed, the device, the model, the map shown and any heads switched off."
        </p>
    }
}
