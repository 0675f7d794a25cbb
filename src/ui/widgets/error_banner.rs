//! The page's error banner.

use leptos::prelude::*;

/// A visible message that can be dismissed; the app keeps working underneath. It floats over
/// the page rather than pushing it down, so it never moves the pad while someone draws.
#[component]
pub fn ErrorBanner(error: RwSignal<Option<String>>) -> impl IntoView {
    move || {
        error.get().map(|message| {
            view! {
                <div class="error toast" data-testid="error" role="alert">
                    <span>{message}</span>
                    <button on:click=move |_| error.set(None)>"Dismiss"</button>
                </div>
            }
        })
    }
}
