//! Work a section needs only once someone looks at it: started the first time the section
//! comes on screen, so that a visit that never scrolls there never pays for it.

use leptos::html::Section;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use crate::web;

/// Runs `seen` once the section `node` refers to first comes on screen.
pub fn on_first_sight(node: NodeRef<Section>, seen: Callback<()>) {
    Effect::new(move |_| {
        let Some(section) = node.get() else {
            return;
        };
        let element: web_sys::Element = section.unchecked_into();
        spawn_local(async move {
            web::when_visible(&element).await;
            // The card may be gone by now (its place left before it was seen).
            seen.try_run(());
        });
    });
}
