//! The footer's line on offline use: whether the page is kept for when the network is gone.

use leptos::prelude::*;

use crate::web::{self, OfflineError};

/// Where offline use stands.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Offline {
    Preparing,
    Ready,
    Unavailable(OfflineError),
}

impl Offline {
    /// The `data-state` tests and styles read.
    fn key(&self) -> &'static str {
        match self {
            Self::Preparing => "preparing",
            Self::Ready => "ready",
            Self::Unavailable(_) => "unavailable",
        }
    }
}

/// Keeps the page for offline use; after the model is in, so that its files are not fetched
/// twice at once on a first visit.
pub(super) async fn keep_for_offline(offline: RwSignal<Offline>) {
    offline.set(match web::keep_for_offline().await {
        Ok(()) => Offline::Ready,
        Err(error) => Offline::Unavailable(error),
    });
}

#[component]
pub(super) fn OfflineNote(offline: RwSignal<Offline>) -> impl IntoView {
    view! {
        <p class="offline" data-testid="offline" data-state=move || offline.with(Offline::key)>
            {move || offline.with(|state| match state {
                Offline::Preparing => "Keeping the page for offline use…".to_string(),
                Offline::Ready => "Works offline: the page, its model and the training data fetched so far are kept in this browser.".to_string(),
                Offline::Unavailable(why) => format!("Needs the network: {why}."),
            })}
        </p>
    }
}
