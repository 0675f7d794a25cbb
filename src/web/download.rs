//! Files the page hands to the browser to save: a run's weights, a chart's numbers.

use wasm_bindgen::JsCast;

use super::describe;

/// Why a download was not offered.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("no document")]
    NoDocument,
    /// The browser refused the link the download goes through (as it says it).
    #[error("{0}")]
    Link(String),
}

/// Hands `bytes` to the browser as a downloaded file.
pub fn offer_download(bytes: &[u8], name: &str) -> Result<(), DownloadError> {
    let blob = gloo_file::Blob::new_with_options(bytes, Some("application/octet-stream"));
    // Revoked when dropped, after the click: the download holds its own reference.
    let url = gloo_file::ObjectUrl::from(blob);
    save_link(&url, name)
}

/// Offers what `canvas` shows as a PNG file.
pub fn offer_png(canvas: &web_sys::HtmlCanvasElement, name: &str) -> Result<(), DownloadError> {
    let url = canvas
        .to_data_url_with_type("image/png")
        .map_err(|error| DownloadError::Link(describe(error)))?;
    save_link(&url, name)
}

/// Clicks a link that saves `url` as a file called `name`.
fn save_link(url: &str, name: &str) -> Result<(), DownloadError> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or(DownloadError::NoDocument)?;
    let anchor: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(|error| DownloadError::Link(describe(error)))?
        .unchecked_into();
    anchor.set_href(url);
    anchor.set_download(name);
    anchor.click();
    Ok(())
}
