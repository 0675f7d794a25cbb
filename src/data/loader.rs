//! Getting a chunk that checks out: fetch, verify, retry with backoff. The fetching and the
//! waiting are passed in, so the browser (network + Cache Storage, `setTimeout`) and the tests
//! (scripted failures, no waiting) run the same logic.

use std::future::Future;

use super::{ChunkDecoder, ChunkEntry, MnistSet};

/// How often and how patiently a chunk is fetched again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, the first included.
    pub attempts: u32,
    /// The wait before the second try; it doubles before each later one.
    pub first_delay_ms: u32,
    /// No wait is longer than this.
    pub max_delay_ms: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: 5,
            first_delay_ms: 500,
            max_delay_ms: 8_000,
        }
    }
}

impl RetryPolicy {
    /// The wait after failed try number `attempt` (1-based).
    pub fn delay_ms(&self, attempt: u32) -> u32 {
        let doublings = attempt.saturating_sub(1).min(16);
        self.first_delay_ms
            .saturating_mul(1 << doublings)
            .min(self.max_delay_ms)
    }
}

/// How a fetched chunk is decoded: at once (a worker, the CLI), or in slices of this many
/// bytes with a `sleep(0)` between them (a UI thread, which must keep answering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Decoding {
    #[default]
    AtOnce,
    InSlices(usize),
}

/// A failed try that will be followed by another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retry {
    pub file: String,
    /// The try that failed, 1-based.
    pub attempt: u32,
    pub delay_ms: u32,
    pub reason: String,
}

impl std::fmt::Display for Retry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}; trying again in {:.1} s",
            self.file,
            self.reason,
            self.delay_ms as f64 / 1000.0
        )
    }
}

/// A chunk that never came whole: its file, the tries made, and why the last one failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}: gave up after {tries} tries: {reason}")]
pub struct GaveUp {
    pub file: String,
    pub tries: u32,
    pub reason: String,
}

/// Fetches `entry` until its bytes pass [`ChunkDecoder::verified`] (checksum, format, count) or
/// the tries run out. `fetch(attempt)` gets the bytes (a browser may answer try 1 from its cache
/// and go to the network after); `sleep(ms)` waits; `on_retry` hears of every failed try but
/// the last.
pub async fn load_verified<Fetch, Fetched, Sleep, Slept>(
    entry: &ChunkEntry,
    policy: RetryPolicy,
    decoding: Decoding,
    mut fetch: Fetch,
    mut sleep: Sleep,
    mut on_retry: impl FnMut(&Retry),
) -> Result<MnistSet, GaveUp>
where
    Fetch: FnMut(u32) -> Fetched,
    Fetched: Future<Output = Result<Vec<u8>, String>>,
    Sleep: FnMut(u32) -> Slept,
    Slept: Future<Output = ()>,
{
    let attempts = policy.attempts.max(1);
    let mut attempt = 1;
    loop {
        let reason = match fetch(attempt).await {
            Ok(bytes) => match decode(&bytes, entry, decoding, &mut sleep).await {
                Ok(set) => return Ok(set),
                Err(error) => error.to_string(),
            },
            Err(error) => error,
        };
        if attempt >= attempts {
            return Err(GaveUp {
                file: entry.file.clone(),
                tries: attempts,
                reason,
            });
        }
        let retry = Retry {
            file: entry.file.clone(),
            attempt,
            delay_ms: policy.delay_ms(attempt),
            reason,
        };
        on_retry(&retry);
        sleep(retry.delay_ms).await;
        attempt += 1;
    }
}

async fn decode<Sleep, Slept>(
    bytes: &[u8],
    entry: &ChunkEntry,
    decoding: Decoding,
    sleep: &mut Sleep,
) -> Result<MnistSet, super::ChunkError>
where
    Sleep: FnMut(u32) -> Slept,
    Slept: Future<Output = ()>,
{
    let decoder = ChunkDecoder::verified(bytes, entry);
    match decoding {
        Decoding::AtOnce => decoder.finish(),
        Decoding::InSlices(work) => decoder.finish_pausing(work, || sleep(0)).await,
    }
}
