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

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    #[test]
    fn plain_bytes_pass_as_they_came() {
        let plain = b"\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":1}".to_vec();
        assert_eq!(ungzipped(plain.clone(), 4).unwrap(), plain);
    }

    #[test]
    fn gzip_bytes_are_inflated_up_to_the_limit_and_refused_past_it() {
        let file = vec![7u8; 10_000];
        let packed = gzip(&file);
        assert!(packed.len() < 200);
        assert_eq!(ungzipped(packed.clone(), 10_000).unwrap(), file);
        assert_eq!(
            ungzipped(packed, 9_999),
            Err(WeightsError::InflatesPast { limit: 9_999 })
        );
    }

    #[test]
    fn in_steps_it_inflates_what_it_inflates_at_once() {
        let file: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let packed = gzip(&file);
        for (step, limit) in [
            (7, 100_000),
            (4_096, 100_000),
            (99_999, 100_000),
            (4_096, 99_999),
        ] {
            let mut inflating = Ungzipping::new(packed.clone(), limit);
            let mut steps = 0;
            let done = loop {
                steps += 1;
                if let Some(done) = inflating.step(step) {
                    break done;
                }
            };
            assert_eq!(done, ungzipped(packed.clone(), limit), "steps of {step}");
            assert!(steps > 1, "steps of {step} took {steps}");
        }
        let mut plain = Ungzipping::new(file.clone(), 10);
        assert_eq!(plain.step(1), Some(Ok(file)));
    }

    #[test]
    fn a_broken_gzip_file_is_said_to_be_one() {
        let mut packed = gzip(&[1u8; 5_000]);
        packed.truncate(packed.len() / 2);
        let said = ungzipped(packed, 1 << 20).unwrap_err();
        assert!(matches!(said, WeightsError::Gzip(_)), "{said:?}");
        assert!(
            said.to_string().starts_with("the file is not valid gzip"),
            "{said}"
        );
    }
}
