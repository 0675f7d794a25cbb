//! Offline use: the page registers the service worker `sw.js` (written in `www/sw.js`), which
//! keeps the page, its workers, the default weights and the data's manifest, so that after one
//! visit the page loads, classifies and trains with the network gone.

use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use super::global::describe;

/// The service worker, beside `index.html`: its scope is the folder the site is served from.
const SERVICE_WORKER: &str = "./sw.js";

/// Why the page will not work offline in this browser.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OfflineError {
    #[error(
        "this browser offers the page no service worker (a private window, or a page not served over https)"
    )]
    NoServiceWorker,
    #[error("the service worker was refused ({0})")]
    Refused(String),
}

/// Registers the service worker and waits until it serves: from then on the page works
/// offline.
pub async fn keep_for_offline() -> Result<(), OfflineError> {
    let navigator = web_sys::window()
        .ok_or(OfflineError::NoServiceWorker)?
        .navigator();
    // Missing, not merely refused, in Firefox's private windows and on plain http off localhost.
    let present = js_sys::Reflect::get(&navigator, &JsValue::from_str("serviceWorker"))
        .is_ok_and(|container| !container.is_undefined() && !container.is_null());
    if !present {
        return Err(OfflineError::NoServiceWorker);
    }
    let container = navigator.service_worker();
    JsFuture::from(container.register(SERVICE_WORKER))
        .await
        .map_err(|error| OfflineError::Refused(describe(error)))?;
    JsFuture::from(
        container
            .ready()
            .map_err(|error| OfflineError::Refused(describe(error)))?,
    )
    .await
    .map_err(|error| OfflineError::Refused(describe(error)))?;
    Ok(())
}
