//! The page's address in the URL's fragment (`crate::place` reads it): what it is now, when it
//! changes (a link followed, back, forward), and the part it names brought into view.

use std::cell::RefCell;
use std::rc::Rc;

use futures::channel::oneshot;
use gloo_events::EventListener;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

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

/// Resolves once the element with `id` is in the document (at once where it is already), or
/// `false` after `ms`: a part of a place that is built after the place (the story once the page
/// has room for it, the experiments once the model is in) is waited for, never looked for
/// again and again.
pub async fn when_built(id: &str, ms: u32) -> bool {
    let Some(document) = web_sys::window().and_then(|window| window.document()) else {
        return false;
    };
    if document.get_element_by_id(id).is_some() {
        return true;
    }
    let Some(root) = document.document_element() else {
        return false;
    };
    let (tell, built) = oneshot::channel::<()>();
    let tell = Rc::new(RefCell::new(Some(tell)));
    let (wanted, seen) = (id.to_string(), document.clone());
    let changed = Closure::<dyn FnMut()>::new(move || {
        if seen.get_element_by_id(&wanted).is_some()
            && let Some(tell) = tell.borrow_mut().take()
        {
            let _ = tell.send(());
        }
    });
    let Ok(observer) = web_sys::MutationObserver::new(changed.as_ref().unchecked_ref()) else {
        return false;
    };
    let options = web_sys::MutationObserverInit::new();
    options.set_child_list(true);
    options.set_subtree(true);
    if observer.observe_with_options(&root, &options).is_err() {
        return false;
    }
    let found = super::within_ms(ms, built)
        .await
        .is_some_and(|told| told.is_ok());
    observer.disconnect();
    drop(changed);
    found
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
