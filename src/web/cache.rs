//! Bytes kept in the browser's Cache Storage: data chunks, so a reload does not download them
//! again (runs live in IndexedDB, `run_db`; the caches runs were kept in before are read only
//! to move them there, `run_migration`).

use js_sys::Uint8Array;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, Response};

use super::global::{caches, describe};

/// A write to Cache Storage that did not happen.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StorageError {
    /// The body could not be made into a response (the browser's words).
    #[error("{0}")]
    Body(String),
    #[error("saving {key} in the browser cache failed: {why}")]
    Save { key: String, why: String },
    #[error("deleting {key} from the browser cache failed: {why}")]
    Delete { key: String, why: String },
}

/// One named cache. Keys are URLs relative to the page (the cache resolves them).
#[derive(Clone)]
pub struct ByteCache {
    cache: Cache,
}

impl ByteCache {
    /// `None` where Cache Storage is missing or refused (e.g. private windows, plain http).
    pub async fn open(name: &str) -> Option<Self> {
        let cache = JsFuture::from(caches()?.open(name)).await.ok()?;
        Some(Self {
            cache: cache.dyn_into().ok()?,
        })
    }

    pub async fn get(&self, key: &str) -> Option<Vec<u8>> {
        let response = JsFuture::from(self.cache.match_with_str(key)).await.ok()?;
        let response: Response = response.dyn_into().ok()?;
        let buffer = JsFuture::from(response.array_buffer().ok()?).await.ok()?;
        Some(Uint8Array::new(&buffer).to_vec())
    }

    pub async fn put(&self, key: &str, bytes: &[u8]) -> Result<(), StorageError> {
        let response = Response::new_with_opt_u8_array(Some(&mut bytes.to_vec()))
            .map_err(|e| StorageError::Body(describe(e)))?;
        JsFuture::from(self.cache.put_with_str(key, &response))
            .await
            .map(drop)
            .map_err(|e| StorageError::Save {
                key: key.to_string(),
                why: describe(e),
            })
    }

    pub async fn delete(&self, key: &str) -> Result<(), StorageError> {
        JsFuture::from(self.cache.delete_with_str(key))
            .await
            .map(drop)
            .map_err(|e| StorageError::Delete {
                key: key.to_string(),
                why: describe(e),
            })
    }
}

/// Deletes a whole cache (tests start clean with it).
pub async fn delete_cache(name: &str) {
    if let Some(caches) = caches() {
        let _ = JsFuture::from(caches.delete(name)).await;
    }
}
