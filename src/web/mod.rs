//! The browser boundary: device start-up, fetching, the URL.

mod device;

pub use device::{Backend, StartedDevice, start_device};

/// A query parameter of the page's URL, e.g. `backend` in `?backend=cpu`.
pub fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search)
        .ok()?
        .get(name)
}
