use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, Response};

use super::global::{describe, fetch_promise};

/// Fetches `url` and reports `(bytes so far, total if known)` as the body streams in.
pub async fn fetch_bytes(
    url: &str,
    mut on_progress: impl FnMut(usize, Option<usize>),
) -> Result<Vec<u8>, String> {
    let response: Response = JsFuture::from(fetch_promise(url)?)
        .await
        .map_err(|e| format!("fetching {url} failed: {}", describe(e)))?
        .dyn_into()
        .map_err(|_| format!("fetching {url} gave no response"))?;
    if !response.ok() {
        return Err(format!("fetching {url} failed: HTTP {}", response.status()));
    }
    let total = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|length| length.parse().ok());
    let Some(body) = response.body() else {
        let buffer = JsFuture::from(response.array_buffer().map_err(describe)?)
            .await
            .map_err(describe)?;
        return Ok(Uint8Array::new(&buffer).to_vec());
    };
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut bytes = Vec::with_capacity(total.unwrap_or(0));
    loop {
        let chunk = JsFuture::from(reader.read())
            .await
            .map_err(|e| format!("reading {url} failed: {}", describe(e)))?;
        let done = Reflect::get(&chunk, &"done".into())
            .map(|d| d.is_truthy())
            .unwrap_or(true);
        if done {
            break;
        }
        let value = Reflect::get(&chunk, &"value".into()).map_err(describe)?;
        bytes.extend(Uint8Array::new(&value).to_vec());
        on_progress(bytes.len(), total);
    }
    Ok(bytes)
}
