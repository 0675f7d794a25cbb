//! Work the visitor has not asked for waits until the page has time for it: after the page has
//! loaded and gone quiet, or until the element it fills is seen. The first load fetches and
//! computes only what the first screen shows.

use std::cell::RefCell;
use std::rc::Rc;

use futures::channel::oneshot;
use js_sys::{Array, Function, Promise, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{IntersectionObserver, IntersectionObserverEntry};

use super::global::{sleep_ms, within_ms};

/// The longest an idle callback waits for the page to go quiet.
const IDLE_TIMEOUT_MS: u32 = 3_000;

/// Resolves once the page has loaded, then `quiet_ms` more have passed, then the browser is
/// idle (`requestIdleCallback`, where the browser has it: Safari has not, and waits the
/// quiet time alone).
pub async fn when_idle(quiet_ms: u32) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let loaded = window
        .document()
        .is_some_and(|document| document.ready_state() == "complete");
    if !loaded {
        let load = Promise::new(&mut |resolve, _| {
            let _ = window.add_event_listener_with_callback("load", &resolve);
        });
        let _ = JsFuture::from(load).await;
    }
    sleep_ms(quiet_ms).await;
    let idle = Reflect::get(&window, &"requestIdleCallback".into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok());
    if let Some(request_idle) = idle {
        let options = js_sys::Object::new();
        let _ = Reflect::set(&options, &"timeout".into(), &IDLE_TIMEOUT_MS.into());
        let idle = Promise::new(&mut |resolve, _| {
            let _ = request_idle.call2(&window, &resolve, &options);
        });
        let _ = JsFuture::from(idle).await;
    }
}

/// Resolves at the first key pressed anywhere in the page (a visitor on the keyboard is on
/// the way through it).
pub async fn when_key_pressed() {
    let Some(document) = web_sys::window().and_then(|window| window.document()) else {
        return;
    };
    let (pressed, press) = oneshot::channel::<()>();
    let _listening = gloo_events::EventListener::once(&document, "keydown", move |_| {
        let _ = pressed.send(());
    });
    let _ = press.await;
}

/// `changed(hidden)` each time the page is hidden (another tab or app in front, a page being
/// left) or shown again, for the page's life. A page may be ended while hidden without another
/// word; `pagehide` says it of one left without a change of visibility (a page already hidden
/// and closed, a navigation in some browsers).
pub fn on_page_hidden(changed: impl Fn(bool) + Clone + 'static) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Some(document) = window.document() else {
        return;
    };
    let (seen, shown) = (document.clone(), changed.clone());
    gloo_events::EventListener::new(&document, "visibilitychange", move |_| {
        shown(seen.visibility_state() == web_sys::VisibilityState::Hidden)
    })
    .forget();
    gloo_events::EventListener::new(&window, "pagehide", move |_| changed(true)).forget();
}

/// Resolves once the browser has painted the page as it is now: after the next animation frame
/// (which comes just before a paint) and a task after it. A hidden tab paints nothing and has
/// no frames: there it waits `NO_FRAME_MS` at most.
pub async fn after_next_paint() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let frame = Promise::new(&mut |resolve, _| {
        let _ = window.request_animation_frame(&resolve);
    });
    let frame = JsFuture::from(frame);
    let _ = within_ms(NO_FRAME_MS, frame).await;
    sleep_ms(0).await;
}

/// How long a page with no animation frames (a hidden tab) waits for one.
const NO_FRAME_MS: u32 = 100;

/// Stops watching when the wait is dropped (the component that waited is gone).
struct Watch {
    observer: IntersectionObserver,
    _on_change: Closure<dyn FnMut(Array)>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.observer.disconnect();
    }
}

/// Resolves once any part of `element` is on screen (at once where the browser cannot tell).
pub async fn when_visible(element: &web_sys::Element) {
    let (seen, waiting) = oneshot::channel::<()>();
    let seen = Rc::new(RefCell::new(Some(seen)));
    let on_change = Closure::<dyn FnMut(Array)>::new(move |entries: Array| {
        let visible = entries
            .iter()
            .filter_map(|entry| entry.dyn_into::<IntersectionObserverEntry>().ok())
            .any(|entry| entry.is_intersecting());
        if visible && let Some(seen) = seen.borrow_mut().take() {
            let _ = seen.send(());
        }
    });
    let Ok(observer) = IntersectionObserver::new(on_change.as_ref().unchecked_ref()) else {
        return;
    };
    observer.observe(element);
    let _watch = Watch {
        observer,
        _on_change: on_change,
    };
    let _ = waiting.await;
}
