//! A chunk decoded a slice of work at a time. The page decodes test digits on its UI thread
//! and yields between slices, so a drawing never waits for a whole chunk (about 10 ms in
//! one go); the worker and the native tools run the same decoder to the end at once.

use std::future::Future;

use miniz_oxide::inflate::TINFLStatus;
use miniz_oxide::inflate::core::{DecompressorOxide, decompress, inflate_flags};
use sha2::{Digest, Sha256};

use super::chunk::{CHUNK_MAGIC, ChunkError, HEADER_BYTES, IMAGE_BYTES, MAX_CHUNK_BYTES, hex};
use super::{ChunkEntry, IMAGE_SIDE, MnistSet};

/// Work done between two pauses when decoding on a UI thread: hashing or inflating this
/// many bytes takes well under a millisecond there.
pub const UI_SLICE_BYTES: usize = 128 * 1024;

/// A chunk's bytes on their way to images: hashed (when an entry is known), inflated, checked.
pub struct ChunkDecoder<'a> {
    bytes: &'a [u8],
    entry: Option<&'a ChunkEntry>,
    stage: Stage,
}

enum Stage {
    Hashing {
        hasher: Sha256,
        hashed: usize,
    },
    Inflating {
        inflater: Box<DecompressorOxide>,
        read: usize,
        raw: Vec<u8>,
        written: usize,
        /// Inflating stops here: a chunk that claims few images cannot make the reader
        /// allocate for many.
        limit: usize,
    },
    Ended,
}

/// Raw deflate (no zlib header) into one buffer that keeps what came before.
const FLAGS: u32 = inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;

impl<'a> ChunkDecoder<'a> {
    /// Checks `bytes` against `entry` (checksum, then count) as it decodes them.
    pub fn verified(bytes: &'a [u8], entry: &'a ChunkEntry) -> Self {
        Self {
            bytes,
            entry: Some(entry),
            stage: Stage::Hashing {
                hasher: Sha256::new(),
                hashed: 0,
            },
        }
    }

    /// Decodes `bytes` whose integrity was checked elsewhere (or is not known).
    pub fn unverified(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            entry: None,
            stage: inflating(MAX_CHUNK_BYTES),
        }
    }

    /// Hashes or inflates about `work` more bytes; the images, or why there are none, once
    /// the chunk is through. A decoder that has answered answers nothing more.
    pub fn step(&mut self, work: usize) -> Option<Result<MnistSet, ChunkError>> {
        let work = work.max(1);
        let bytes = self.bytes;
        match &mut self.stage {
            Stage::Hashing { hasher, hashed } => {
                let end = hashed.saturating_add(work).min(bytes.len());
                hasher.update(&bytes[*hashed..end]);
                *hashed = end;
                if end < bytes.len() {
                    return None;
                }
                let hasher = std::mem::take(hasher);
                self.after_hashing(hex(&hasher.finalize()))
            }
            Stage::Inflating {
                inflater,
                read,
                raw,
                written,
                limit,
            } => {
                if *written == raw.len() {
                    if raw.len() >= *limit {
                        let error = ChunkError::Inflate(format!(
                            "it inflates to more than the {limit} bytes it may hold"
                        ));
                        return self.end(Err(error));
                    }
                    // Grown as `decompress_to_vec` grows it: doubling, from twice the input.
                    let grown = raw.len().max(bytes.len()).saturating_mul(2).min(*limit);
                    raw.resize(grown, 0);
                }
                let end = written.saturating_add(work).min(raw.len());
                let input = bytes.get(*read..).unwrap_or_default();
                let (status, consumed, produced) =
                    decompress(inflater, input, &mut raw[..end], *written, FLAGS);
                *read = read.saturating_add(consumed);
                *written += produced;
                match status {
                    TINFLStatus::Done => {
                        raw.truncate(*written);
                        let raw = std::mem::take(raw);
                        let decoded = parse(&raw).and_then(|set| self.count_checked(set));
                        self.end(decoded)
                    }
                    TINFLStatus::HasMoreOutput => None,
                    status => self.end(Err(ChunkError::Inflate(format!("{status:?}")))),
                }
            }
            Stage::Ended => None,
        }
    }

    /// Runs to the end at once.
    pub fn finish(mut self) -> Result<MnistSet, ChunkError> {
        loop {
            if let Some(decoded) = self.step(usize::MAX) {
                return decoded;
            }
        }
    }

    /// Runs to the end `work` bytes at a time, awaiting `pause()` between slices.
    pub async fn finish_pausing<Paused: Future<Output = ()>>(
        mut self,
        work: usize,
        mut pause: impl FnMut() -> Paused,
    ) -> Result<MnistSet, ChunkError> {
        loop {
            if let Some(decoded) = self.step(work) {
                return decoded;
            }
            pause().await;
        }
    }

    fn after_hashing(&mut self, actual: String) -> Option<Result<MnistSet, ChunkError>> {
        let entry = self.entry.expect("only a verified decoder hashes");
        if actual != entry.sha256 {
            return self.end(Err(ChunkError::Checksum {
                expected: entry.sha256.clone(),
                actual,
            }));
        }
        match chunk_len(entry.items) {
            Ok(limit) => {
                self.stage = inflating(limit);
                None
            }
            Err(error) => self.end(Err(error)),
        }
    }

    fn count_checked(&self, set: MnistSet) -> Result<MnistSet, ChunkError> {
        match self.entry {
            Some(entry) if set.len() != entry.items => Err(ChunkError::Count {
                expected: entry.items,
                actual: set.len(),
            }),
            _ => Ok(set),
        }
    }

    fn end(
        &mut self,
        decoded: Result<MnistSet, ChunkError>,
    ) -> Option<Result<MnistSet, ChunkError>> {
        self.stage = Stage::Ended;
        Some(decoded)
    }
}

fn inflating(limit: usize) -> Stage {
    Stage::Inflating {
        inflater: Box::default(),
        read: 0,
        raw: Vec::new(),
        written: 0,
        limit,
    }
}

/// The inflated length of a chunk of `count` images, in checked arithmetic: on 32-bit (the
/// browser) a hostile count would otherwise wrap to a small length.
fn chunk_len(count: usize) -> Result<usize, ChunkError> {
    count
        .checked_mul(IMAGE_BYTES)
        .and_then(|body| body.checked_add(HEADER_BYTES))
        .filter(|&len| len <= MAX_CHUNK_BYTES)
        .ok_or(ChunkError::TooMany(count))
}

/// An inflated chunk's header, labels and images, each checked.
fn parse(raw: &[u8]) -> Result<MnistSet, ChunkError> {
    if raw.len() < HEADER_BYTES {
        return Err(ChunkError::Truncated {
            expected: HEADER_BYTES,
            actual: raw.len(),
        });
    }
    if &raw[..4] != CHUNK_MAGIC {
        return Err(ChunkError::Magic);
    }
    let count = u32::from_le_bytes(raw[4..8].try_into().expect("4 bytes")) as usize;
    let side = u16::from_le_bytes(raw[8..10].try_into().expect("2 bytes")) as usize;
    if side != IMAGE_SIDE {
        return Err(ChunkError::Magic);
    }
    let expected = chunk_len(count)?;
    if raw.len() != expected {
        return Err(ChunkError::Truncated {
            expected,
            actual: raw.len(),
        });
    }
    let labels = raw[HEADER_BYTES..HEADER_BYTES + count].to_vec();
    if let Some(&bad) = labels.iter().find(|&&label| label > 9) {
        return Err(ChunkError::Label(bad));
    }
    let images = raw[HEADER_BYTES + count..].to_vec();
    Ok(MnistSet { images, labels })
}

/// Verifies a chunk against its manifest entry and decodes it.
pub fn decode_chunk(bytes: &[u8], entry: &ChunkEntry) -> Result<MnistSet, ChunkError> {
    ChunkDecoder::verified(bytes, entry).finish()
}

/// Decodes a chunk whose integrity was checked elsewhere (or is not known).
pub fn decode_chunk_unverified(bytes: &[u8]) -> Result<MnistSet, ChunkError> {
    ChunkDecoder::unverified(bytes).finish()
}
