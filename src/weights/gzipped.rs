//! Weights shipped gzip-compressed: the site serves its models as `.safetensors.gz`, since
//! static hosts send a `.safetensors` file as it is and gzip takes 7.6 % off a model's float
//! bytes (the lab model 825,704 -> 762,871 bytes, the first load's second-largest file).

use std::io::Read;

use super::WeightsError;

/// A gzip member's first bytes (RFC 1952): its magic and deflate, the one method it names. A
/// safetensors file starts with its header's length, which would have to be 559,903 bytes (or
/// that plus a multiple of 16 MiB) to start so.
const GZIP_START: [u8; 3] = [0x1f, 0x8b, 0x08];

/// `bytes` inflated where they are gzip-compressed, never to more than `limit` bytes (what the
/// page would read of a file sent as it is); any other bytes as they came.
pub fn ungzipped(bytes: Vec<u8>, limit: usize) -> Result<Vec<u8>, WeightsError> {
    let mut inflating = Ungzipping::new(bytes, limit);
    loop {
        if let Some(done) = inflating.step(usize::MAX) {
            return done;
        }
    }
}

/// [`ungzipped`] a part at a time, for a thread that must not be held long: the page inflates
/// the shipped model (763 kB to 826 kB) in steps of a few hundred kB with a task between them,
/// where in one go it was a 95 ms task on a phone's CPU.
pub struct Ungzipping {
    state: State,
    limit: usize,
}

enum State {
    Plain(Vec<u8>),
    Inflating {
        decoder: Box<flate2::read::GzDecoder<std::io::Cursor<Vec<u8>>>>,
        inflated: Vec<u8>,
    },
    Done,
}

impl Ungzipping {
    pub fn new(bytes: Vec<u8>, limit: usize) -> Self {
        let state = if bytes.starts_with(&GZIP_START) {
            State::Inflating {
                decoder: Box::new(flate2::read::GzDecoder::new(std::io::Cursor::new(bytes))),
                inflated: Vec::new(),
            }
        } else {
            State::Plain(bytes)
        };
        Self { state, limit }
    }

    /// Inflates up to `at_most` more bytes: the file, or why it cannot be had, once it is
    /// whole or refused; `None` while there is more. Asked again after an answer, it answers
    /// with an empty file.
    pub fn step(&mut self, at_most: usize) -> Option<Result<Vec<u8>, WeightsError>> {
        let limit = self.limit;
        match std::mem::replace(&mut self.state, State::Done) {
            State::Plain(bytes) => Some(Ok(bytes)),
            State::Done => Some(Ok(Vec::new())),
            State::Inflating {
                mut decoder,
                mut inflated,
            } => {
                // One byte past the limit tells a file that fits from one that does not.
                let reach = limit.saturating_add(1).saturating_sub(inflated.len());
                let asked = u64::try_from(at_most.min(reach)).unwrap_or(u64::MAX);
                let before = inflated.len();
                if let Err(error) = (&mut decoder).take(asked).read_to_end(&mut inflated) {
                    return Some(Err(WeightsError::Gzip(error.to_string())));
                }
                if inflated.len() > limit {
                    return Some(Err(WeightsError::InflatesPast { limit }));
                }
                // Less than asked: the stream has ended.
                if ((inflated.len() - before) as u64) < asked {
                    return Some(Ok(inflated));
                }
                self.state = State::Inflating { decoder, inflated };
                None
            }
        }
    }
}
