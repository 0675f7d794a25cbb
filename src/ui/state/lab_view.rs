//! How the lab is looked at, kept while another place is shown: the attention map shown
//! large and the heads switched off in every classification (a link sets both), and what a
//! click on a head's map does.

use leptos::prelude::*;

use crate::analysis::MapChoice;
use crate::model::HeadsOff;
use crate::share::View;

/// A context of its own (`AppState::provide`).
#[derive(Clone, Copy)]
pub struct LabView {
    /// The attention map shown large.
    pub map: RwSignal<MapChoice>,
    /// The heads switched off in every classification.
    pub heads_off: RwSignal<HeadsOff>,
    /// Whether a click on a head's map switches it off (else it shows it large).
    pub heads_switching: RwSignal<bool>,
}

impl LabView {
    /// As a link's `view` sets it.
    pub fn new(view: View) -> Self {
        Self {
            map: RwSignal::new(view.map),
            heads_off: RwSignal::new(view.heads_off),
            heads_switching: RwSignal::new(false),
        }
    }
}
