//! Fetching with gloo-net (which works in a worker too), with what gloo leaves to us: the
//! body read as a stream for progress, a size cap, and a stall timeout.

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::ReadableStreamDefaultReader;

use super::global::{describe, within_ms};

/// The most a response may hold: the largest weights file the page's budget allows
/// ([`crate::model::Budget::PAGE`]), with room for its header. A bigger answer is not
/// something this page asked for.
pub const MAX_FETCH_BYTES: usize = 4 * crate::model::Budget::PAGE.max_params as usize + (16 << 20);

/// Why a fetch gave no bytes.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FetchError {
    #[error("fetching {url} stalled: nothing arrived for {seconds} s")]
    Stalled { url: String, seconds: u32 },
    /// The request failed before a response (gloo's words for why).
    #[error("fetching {url} failed: {why}")]
    Failed { url: String, why: String },
    #[error("fetching {url} failed: HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("{url} is {} MB or more, larger than the {} MB this page reads", .bytes >> 20, MAX_FETCH_BYTES >> 20)]
    TooBig { url: String, bytes: usize },
    /// The body broke off (the browser's words for why).
    #[error("reading {url} failed: {why}")]
    Read { url: String, why: String },
    /// A piece of the body that is not one (the browser's words).
    #[error("{0}")]
    NotAPiece(String),
    /// Weights sent gzip-compressed that do not inflate ([`fetch_weights`]).
    #[error("{url}: {source}")]
    Weights {
        url: String,
        source: crate::weights::WeightsError,
    },
}

fn too_big(url: &str, bytes: usize) -> FetchError {
    FetchError::TooBig {
        url: url.to_string(),
        bytes,
    }
}

/// How long a response may keep the page waiting without a byte before it counts as stalled
/// (and the chunk loader retries it): a server that never answers cannot hold a run, a Stop
/// or a Reset for longer than this.
pub const STALL_MS: u32 = 20_000;

async fn unless_stalled<T>(url: &str, work: impl Future<Output = T>) -> Result<T, FetchError> {
    within(STALL_MS, url, work).await
}

/// `work`, or an error naming `url` once it has waited `ms` milliseconds.
pub async fn within<T>(ms: u32, url: &str, work: impl Future<Output = T>) -> Result<T, FetchError> {
    within_ms(ms, work)
        .await
        .ok_or_else(|| FetchError::Stalled {
            url: url.to_string(),
            seconds: ms / 1000,
        })
}

/// A weights file at `url` as [`fetch_bytes`] brings it, inflated where it came
/// gzip-compressed (the shipped models, `.safetensors.gz`), to no more than a plain file may
/// hold.
pub async fn fetch_weights(
    url: &str,
    on_progress: impl FnMut(usize, Option<usize>),
) -> Result<Vec<u8>, FetchError> {
    let bytes = fetch_bytes(url, on_progress).await?;
    let mut inflating = crate::weights::Ungzipping::new(bytes, MAX_FETCH_BYTES);
    loop {
        // A step a task: the page's thread is never held long.
        if let Some(done) = inflating.step(INFLATE_STEP_BYTES) {
            return done.map_err(|source| FetchError::Weights {
                url: url.to_string(),
                source,
            });
        }
        super::next_task().await;
    }
}

/// How much of a weights file is inflated in one task: the shipped model (826 kB) in four.
const INFLATE_STEP_BYTES: usize = 256 * 1024;

/// Fetches `url` and reports `(bytes so far, total if known)` as the body streams in.
pub async fn fetch_bytes(
    url: &str,
    mut on_progress: impl FnMut(usize, Option<usize>),
) -> Result<Vec<u8>, FetchError> {
    let response = unless_stalled(url, gloo_net::http::Request::get(url).send())
        .await?
        .map_err(|e| FetchError::Failed {
            url: url.to_string(),
            why: e.to_string(),
        })?;
    if !response.ok() {
        return Err(FetchError::Status {
            url: url.to_string(),
            status: response.status(),
        });
    }
    let total = response
        .headers()
        .get("content-length")
        .and_then(|length| length.parse::<usize>().ok());
    if let Some(total) = total.filter(|&total| total > MAX_FETCH_BYTES) {
        return Err(too_big(url, total));
    }
    let Some(body) = response.body() else {
        let bytes =
            unless_stalled(url, response.binary())
                .await?
                .map_err(|e| FetchError::Read {
                    url: url.to_string(),
                    why: e.to_string(),
                })?;
        if bytes.len() > MAX_FETCH_BYTES {
            return Err(too_big(url, bytes.len()));
        }
        return Ok(bytes);
    };
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut bytes = Vec::with_capacity(total.unwrap_or(0));
    loop {
        let chunk = match unless_stalled(url, JsFuture::from(reader.read())).await {
            Ok(chunk) => chunk.map_err(|e| FetchError::Read {
                url: url.to_string(),
                why: describe(e),
            })?,
            Err(stalled) => {
                let _ = reader.cancel();
                return Err(stalled);
            }
        };
        let done = Reflect::get(&chunk, &"done".into())
            .map(|d| d.is_truthy())
            .unwrap_or(true);
        if done {
            break;
        }
        let value = Reflect::get(&chunk, &"value".into())
            .map_err(|e| FetchError::NotAPiece(describe(e)))?;
        let value = Uint8Array::new(&value);
        // Straight into the buffer: no copy of each piece on the way.
        let start = bytes.len();
        bytes.resize(start + value.length() as usize, 0);
        value.copy_to(&mut bytes[start..]);
        if bytes.len() > MAX_FETCH_BYTES {
            // Content-Length was missing or wrong: stop reading rather than run out of memory.
            let _ = reader.cancel();
            return Err(too_big(url, bytes.len()));
        }
        on_progress(bytes.len(), total);
    }
    Ok(bytes)
}
