//! The page's address in the URL's fragment (`crate::place` reads it): what it is now, when it
//! changes (a link followed, back, forward), and the part it names brought into view.

use gloo_events::EventListener;
use wasm_bindgen::JsCast;

/// The URL's fragment, with its `#` (empty when there is none).
pub fn fragment() -> String {
    web_sys::window()
        .and_then(|window| window.location().hash().ok())
        .unwrap_or_default()
}

/// Calls `changed` with the new fragment each time it changes, for as long as the listener
/// returned is kept.
pub fn on_fragment_change(changed: impl Fn(String) + 'static) -> Option<EventListener> {
    let window = web_sys::window()?;
    Some(EventListener::new(&window, "hashchange", move |_| {
        changed(fragment())
    }))
}

/// The top of the page, at once: a place opens at its start.
pub fn scroll_to_top() {
    if let Some(window) = web_sys::window() {
        window.scroll_to_with_x_and_y(0.0, 0.0);
    }
}

/// Brings the element with `id` into view, its top at the top of the viewport (below the
/// sticky navigation bar, whose height the style sheet gives as `scroll-margin-top`);
/// whether there was one.
pub fn bring_into_view(id: &str) -> bool {
    let Some(element) = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.get_element_by_id(id))
    else {
        return false;
    };
    element.scroll_into_view();
    if let Ok(element) = element.dyn_into::<web_sys::HtmlElement>() {
        // Keyboard and screen-reader users land where the eye does.
        let _ = element.focus();
    }
    true
}

/// Puts `fragment` in the address bar without a new history entry or a `hashchange`: a step
/// of the story chosen keeps its link current, and Back still returns to the place before.
pub fn replace(fragment: &str) {
    let Some(window) = web_sys::window() else {
        return;
    };
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(fragment));
    }
}

/// Moves the keyboard's focus to the element with `id`, if there is one.
pub fn focus(id: &str) {
    let element = web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.get_element_by_id(id))
        .and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(element) = element {
        let _ = element.focus();
    }
}
