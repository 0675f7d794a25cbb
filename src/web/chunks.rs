//! MNIST chunks over the network: Cache Storage first, verified, retried with backoff.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use crate::data::{
    ChunkEntry, ChunkError, Decoding, GaveUp, Manifest, MnistSet, Retry, RetryPolicy,
    UI_SLICE_BYTES, load_verified,
};

use super::cache::ByteCache;
use super::fetch::fetch_bytes;
use super::global::sleep_ms;

/// Where the chunks are served, relative to the page (the worker's script sits beside it).
pub const DATA_BASE: &str = "mnist";
/// The cache chunks are kept in; a new data format gets a new name.
pub const CHUNK_CACHE: &str = "vitlab-mnist-v1";

/// Why the manifest could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ManifestError {
    /// What the network said.
    #[error("{0}")]
    Network(String),
    #[error(transparent)]
    Unreadable(#[from] ChunkError),
}

/// Bytes of a URL from the network, or why not as text: the chunk loader keeps the reason of
/// each try as text (`data::Retry`), so this is where a fetch's error becomes text.
pub type Network = Rc<dyn Fn(String) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>>>>>;

/// Where chunks come from: `base` (the folder of `manifest.json`), the cache and the network.
#[derive(Clone)]
pub struct ChunkSource {
    base: String,
    cache: Option<ByteCache>,
    network: Network,
    decoding: Decoding,
}

fn http() -> Network {
    Rc::new(|url: String| {
        Box::pin(async move {
            fetch_bytes(&url, |_, _| {})
                .await
                .map_err(|e| e.to_string())
        })
    })
}

/// A chunk that checked out.
pub struct LoadedChunk {
    pub set: MnistSet,
    /// Answered by Cache Storage, not the network.
    pub from_cache: bool,
}

impl ChunkSource {
    pub async fn open(base: &str) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
            cache: ByteCache::open(CHUNK_CACHE).await,
            network: http(),
            decoding: Decoding::AtOnce,
        }
    }

    /// Any cache and network: tests script failures with them.
    pub fn with_parts(base: &str, cache: Option<ByteCache>, network: Network) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
            cache,
            network,
            decoding: Decoding::AtOnce,
        }
    }

    /// Decodes in slices, yielding between them: for the page's own thread, which must keep
    /// answering a drawing while a chunk comes in.
    pub fn in_slices(self) -> Self {
        Self {
            decoding: Decoding::InSlices(UI_SLICE_BYTES),
            ..self
        }
    }

    pub fn url(&self, file: &str) -> String {
        format!("{}/{file}", self.base)
    }

    pub async fn manifest(&self) -> Result<Manifest, ManifestError> {
        let bytes = (self.network)(self.url("manifest.json"))
            .await
            .map_err(ManifestError::Network)?;
        Ok(Manifest::parse(&String::from_utf8_lossy(&bytes))?)
    }

    /// The chunk's images, verified against the manifest. The first try may come from the
    /// cache; a copy that fails verification is fetched again, and a good network copy
    /// replaces whatever the cache held.
    pub async fn load(
        &self,
        entry: &ChunkEntry,
        policy: RetryPolicy,
        on_retry: impl FnMut(&Retry),
    ) -> Result<LoadedChunk, GaveUp> {
        let url = self.url(&entry.file);
        let from_cache = Rc::new(Cell::new(false));
        let fetched = Rc::new(Cell::new(None::<Vec<u8>>));
        let set = load_verified(
            entry,
            policy,
            self.decoding,
            |attempt| {
                let (cache, url, network) = (self.cache.clone(), url.clone(), self.network.clone());
                let (from_cache, fetched) = (from_cache.clone(), fetched.clone());
                async move {
                    if attempt == 1
                        && let Some(bytes) = match &cache {
                            Some(cache) => cache.get(&url).await,
                            None => None,
                        }
                    {
                        from_cache.set(true);
                        return Ok(bytes);
                    }
                    from_cache.set(false);
                    let bytes = network(url).await?;
                    fetched.set(Some(bytes.clone()));
                    Ok(bytes)
                }
            },
            sleep_ms,
            on_retry,
        )
        .await?;
        if let (Some(cache), false, Some(bytes)) = (&self.cache, from_cache.get(), fetched.take()) {
            // A cache that will not take it costs only a download next time.
            let _ = cache.put(&url, &bytes).await;
        }
        Ok(LoadedChunk {
            set,
            from_cache: from_cache.get(),
        })
    }
}
