//! The navigation bar: every place one click (or one Tab and Enter) away, the one shown marked
//! for the eye and for a screen reader (`aria-current`); a run under way and the runs kept are
//! marked on their places, so they are found from anywhere.

use leptos::prelude::*;

use crate::place::{Address, Place};
use crate::ui::state::AppState;
use crate::ui::training::training_now;

#[component]
pub(super) fn NavBar() -> impl IntoView {
    let app = expect_context::<AppState>();
    let training = training_now();
    let runs = Memo::new(move |_| app.keeper.records.with(Vec::len));
    let mark = move |place: Place| {
        match place {
        Place::Train => training.get().then(|| {
            view! {
                <span class="nav-mark running" aria-hidden="true">"●"</span>
                <span class="visually-hidden">" (a run is training)"</span>
            }
            .into_any()
        }),
        Place::Runs => (runs.get() > 0).then(|| {
            view! {
                <span class="nav-mark" data-testid="nav-runs-count" aria-hidden="true">{runs.get()}</span>
                <span class="visually-hidden">{format!(" ({} kept)", runs.get())}</span>
            }
            .into_any()
        }),
        _ => None,
    }
    };
    view! {
        <nav class="places" aria-label="places" data-testid="places">
            <ul>
                {Place::ALL.map(|place| view! {
                    <li>
                        <a href=Address::of(place).fragment() data-testid=format!("nav-{}", place.slug())
                            aria-current=move || (app.address.get().place == place).then_some("page")>
                            <span class="nav-name">{place.name()}</span>
                            {move || mark(place)}
                        </a>
                    </li>
                }).collect_view()}
            </ul>
        </nav>
    }
}
