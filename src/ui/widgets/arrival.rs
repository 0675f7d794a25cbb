//! The app's arrival: built out of the document while `index.html`'s static first screen shows,
//! a part a task ([`Later`]), and put in its place in one go once the last part is in. A
//! phone's CPU took the whole first screen's build as one task of ~250 ms, the first load's
//! longest (Lighthouse mobile, 4× slowdown); in parts, no task holds the page that long, and
//! since the app is shown whole and laid out as the static screen it replaces, nothing on
//! screen moves. Once it is shown, parts are built at once: a place opened again is whole in
//! the task that opens it, with nothing appearing card by card.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::web;

/// The parts of the app still to be built, and what shows the app once none is left. A page
/// without one (the browser tests' mounts) builds its [`Later`] parts at once.
#[derive(Clone, Copy)]
pub struct Arrival {
    waiting: StoredValue<usize>,
    show: StoredValue<Option<Box<dyn FnOnce()>>, LocalStorage>,
}

impl Arrival {
    /// An arrival that waits for the mount itself ([`Arrival::arrived`] once it has
    /// returned) and for every [`Later`] part, then calls `show`, in a task of its own.
    pub fn new(show: impl FnOnce() + 'static) -> Self {
        Self {
            waiting: StoredValue::new(1),
            show: StoredValue::new_local(Some(Box::new(show))),
        }
    }

    /// Whether the app is still out of sight, waiting for its parts.
    fn arriving(self) -> bool {
        self.show.try_with_value(Option::is_some).unwrap_or(false)
    }

    fn wait(self) {
        self.waiting.update_value(|waiting| *waiting += 1);
    }

    /// One part is in: the last one shows the app.
    pub fn arrived(self) {
        let mut left = 0;
        self.waiting.update_value(|waiting| {
            *waiting = waiting.saturating_sub(1);
            left = *waiting;
        });
        if left == 0 {
            spawn_local(async move {
                // Once the last part's view is built (its effects run after this turn).
                web::next_task().await;
                if let Some(show) = self.show.try_update_value(Option::take).flatten() {
                    show();
                }
            });
        }
    }
}

/// Its children, built in a task after the one that builds it while the app arrives (a part of
/// the first screen that need not be in the same task as the rest), at once after that.
#[component]
pub fn Later(children: ChildrenFn) -> impl IntoView {
    let Some(arrival) = use_context::<Arrival>().filter(|arrival| arrival.arriving()) else {
        return children().into_any();
    };
    arrival.wait();
    let ready = RwSignal::new(false);
    spawn_local(async move {
        web::next_task().await;
        // Gone already (its place was left): nothing to build, but it counts as in.
        let _ = ready.try_set(true);
        arrival.arrived();
    });
    (move || ready.get().then(|| children())).into_any()
}
