//! The few things the page and the training worker both need from their global scope that
//! gloo does not give: Cache Storage and `performance.now()`, from a window or a worker.

use wasm_bindgen::{JsCast, JsValue};
use web_sys::{CacheStorage, Window, WorkerGlobalScope};

/// The global object: a window, or a worker's scope.
enum Scope {
    Window(Window),
    Worker(WorkerGlobalScope),
}

/// `None` in neither a window nor a worker.
fn scope() -> Option<Scope> {
    let global = js_sys::global();
    if let Some(window) = global.dyn_ref::<Window>() {
        Some(Scope::Window(window.clone()))
    } else {
        global
            .dyn_ref::<WorkerGlobalScope>()
            .map(|worker| Scope::Worker(worker.clone()))
    }
}

/// A thrown JavaScript value as text.
pub fn describe(error: JsValue) -> String {
    error
        .as_string()
        .or_else(|| {
            error
                .dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{error:?}"))
}

/// The origin's Cache Storage, where it is available (not on plain http off localhost).
pub fn caches() -> Option<CacheStorage> {
    match scope()? {
        Scope::Window(window) => window.caches().ok(),
        Scope::Worker(worker) => worker.caches().ok(),
    }
}

/// Waits `ms` milliseconds without blocking (gloo's timer, in a window or a worker alike);
/// 0 lets queued events (messages) run first.
pub async fn sleep_ms(ms: u32) {
    gloo_timers::future::TimeoutFuture::new(ms).await;
}

/// Lets the browser take a turn (queued events, a paint) before the caller goes on: work built
/// in parts, a part a task, so that none holds the page for long.
pub async fn next_task() {
    sleep_ms(0).await;
}

/// Lets the messages already queued for this thread (a Pause, a Stop) run, then goes on at
/// once: a message to itself, queued behind them. `sleep_ms(0)` would let them in too, but a
/// loop of timers is held at least 4 ms a turn (the HTML standard's clamp for nested timers):
/// in a headless Chromium worker 4.1 ms a turn against 0.006 ms for the message
/// (`docs/measurements.md`), 7 % of a training loop that yields every 50 ms.
#[cfg(feature = "train")]
pub async fn yield_to_messages() {
    use js_sys::Promise;
    use wasm_bindgen_futures::JsFuture;
    let Ok(channel) = web_sys::MessageChannel::new() else {
        return sleep_ms(0).await;
    };
    let (receiver, sender) = (channel.port1(), channel.port2());
    let arrived = Promise::new(&mut |resolve, _| receiver.set_onmessage(Some(&resolve)));
    if sender.post_message(&JsValue::UNDEFINED).is_ok() {
        // A promise that `resolve` settles is never rejected.
        let _ = JsFuture::from(arrived).await;
    } else {
        sleep_ms(0).await;
    }
    receiver.close();
    sender.close();
}

/// `work`'s outcome, or `None` when `ms` milliseconds pass first (`work` is dropped then):
/// the one way the page and its workers give up waiting.
pub async fn within_ms<T>(ms: u32, work: impl Future<Output = T>) -> Option<T> {
    let (work, deadline) = (std::pin::pin!(work), std::pin::pin!(sleep_ms(ms)));
    match futures::future::select(work, deadline).await {
        futures::future::Either::Left((outcome, _)) => Some(outcome),
        futures::future::Either::Right(_) => None,
    }
}

/// Milliseconds since the page or worker started.
pub fn now_ms() -> f64 {
    let performance = match scope() {
        Some(Scope::Window(window)) => window.performance(),
        Some(Scope::Worker(worker)) => worker.performance(),
        None => None,
    };
    performance.map(|p| p.now()).unwrap_or(0.0)
}

/// Turns a promise rejected with nothing to catch it (a panic or a JavaScript exception inside
/// a future) into an error of this worker, which the page hears as the worker's `error` event:
/// otherwise a worker whose future died would sit silent while the page waits for it. Written
/// in JavaScript, so that it still runs when the wasm instance that failed cannot.
pub fn report_rejections_as_errors() {
    let handler = js_sys::Function::new_with_args(
        "event",
        "const reason = event.reason; \
         setTimeout(() => { throw reason instanceof Error ? reason : new Error(String(reason)); });",
    );
    let _ = js_sys::global()
        .unchecked_into::<web_sys::EventTarget>()
        .add_event_listener_with_callback("unhandledrejection", &handler);
}
