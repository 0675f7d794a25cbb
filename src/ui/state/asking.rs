//! The two halves of "ask a worker about the drawing" that every card asking one shares: wait
//! until the drawing has settled ([`WhenSettled`]), and keep only the newest request's answer
//! ([`Newest`]). (The deadline is the worker client's: each request has its own.)

use gloo_timers::callback::Timeout;
use leptos::prelude::*;

/// How long a drawing must stay unchanged before the cards that ask a worker about it do:
/// a stroke changes it at every pointer move, and each ask costs the worker forward passes.
pub const DRAWING_SETTLES_MS: u32 = 300;

/// Runs the newest job put to it once [`DRAWING_SETTLES_MS`] pass with no newer one (a
/// debounce); a newer job, or [`WhenSettled::cancel`], drops the one waiting.
#[derive(Clone, Copy)]
pub struct WhenSettled {
    waiting: StoredValue<Option<Timeout>, LocalStorage>,
}

impl WhenSettled {
    pub fn new() -> Self {
        Self {
            waiting: StoredValue::new_local(None),
        }
    }

    /// `job`, once the drawing has stayed as it is for [`DRAWING_SETTLES_MS`].
    pub fn run(self, job: impl FnOnce() + 'static) {
        // Dropping the Timeout waiting before cancels it.
        self.waiting
            .set_value(Some(Timeout::new(DRAWING_SETTLES_MS, job)));
    }

    pub fn cancel(self) {
        self.waiting.set_value(None);
    }
}

impl Default for WhenSettled {
    fn default() -> Self {
        Self::new()
    }
}

/// Tickets for requests whose answers come back in any order: only the newest ticket's answer
/// is shown, an older one is dropped when it comes.
#[derive(Clone, Copy)]
pub struct Newest {
    latest: StoredValue<u32>,
}

/// One request's place in line (see [`Newest`]).
#[derive(Clone, Copy)]
pub struct Ticket {
    line: Newest,
    number: u32,
}

impl Newest {
    pub fn new() -> Self {
        Self {
            latest: StoredValue::new(0),
        }
    }

    /// A ticket for a new request, which makes every earlier one stale.
    pub fn ticket(self) -> Ticket {
        let number = self.latest.get_value().wrapping_add(1);
        self.latest.set_value(number);
        Ticket { line: self, number }
    }
}

impl Default for Newest {
    fn default() -> Self {
        Self::new()
    }
}

impl Ticket {
    /// Whether no request has been made since this one: never once the card that asked is
    /// gone (its place left while the answer was on its way).
    pub fn is_newest(self) -> bool {
        self.line.latest.try_get_value() == Some(self.number)
    }
}
