//! The page's error banner.

use std::fmt::Display;

use leptos::prelude::*;

/// A visible message that can be dismissed; the app keeps working underneath. It floats over
/// the page rather than pushing it down, so it never moves the pad while someone draws.
#[component]
pub fn ErrorBanner<E>(error: RwSignal<Option<E>>) -> impl IntoView
where
    E: Display + Clone + Send + Sync + 'static,
{
    move || {
        error.get().map(|problem| {
            view! {
                <div class="error toast" data-testid="error" role="alert">
                    <span>{problem.to_string()}</span>
                    <button on:click=move |_| error.set(None)>"Dismiss"</button>
                </div>
            }
        })
    }
}
