//! The browser boundary: device start-up, fetching, the URL, the model engine.

mod device;
mod engine;
mod fetch;

pub use device::{Backend, StartedDevice, start_device};
pub use engine::{Engine, FILTER_COMPONENTS};
pub use fetch::fetch_bytes;

/// A query parameter of the page's URL, e.g. `backend` in `?backend=cpu`.
pub fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search)
        .ok()?
        .get(name)
}

/// Milliseconds since the page started, for latency figures.
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}
