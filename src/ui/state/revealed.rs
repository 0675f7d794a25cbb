//! The parts of the page below its first screen come in one at a time once they are called for
//! (`ui/app` says when: the visitor heads for them, or the page has been quiet): each in a task
//! of its own, so that building none of them joins the first load's work, and top to bottom,
//! so that none moves another. (The other places are built when they are opened.)

use leptos::prelude::*;

use crate::web;

/// A part of the page below the first screen, in the order they come in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Below {
    /// The story of the drawing, under the draw place's first screen.
    Story,
    Footer,
}

impl Below {
    const ALL: [Below; 2] = [Below::Story, Below::Footer];
}

/// How much of the page below its first screen is in.
#[derive(Clone, Copy)]
pub struct Revealed(RwSignal<Option<Below>>);

impl Revealed {
    pub fn new() -> Self {
        Self(RwSignal::new(None))
    }

    /// Everything at once (the browser tests' mounts).
    pub fn all() -> Self {
        Self(RwSignal::new(Some(Below::Footer)))
    }

    /// Whether `part` is in; changes once.
    pub fn when(self, part: Below) -> Memo<bool> {
        Memo::new(move |_| self.0.get().is_some_and(|last| last >= part))
    }

    /// Brings every part in, each after the browser has had a turn.
    pub async fn reveal_all(self) {
        for part in Below::ALL {
            if self.0.get_untracked().is_some_and(|last| last >= part) {
                continue;
            }
            web::next_task().await;
            self.0.set(Some(part));
        }
    }
}

impl Default for Revealed {
    fn default() -> Self {
        Self::new()
    }
}
