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
    if !bytes.starts_with(&GZIP_START) {
        return Ok(bytes);
    }
    let mut inflated = Vec::new();
    // One byte past the limit tells a file that fits from one that does not.
    let reach = u64::try_from(limit).map_or(u64::MAX, |limit| limit.saturating_add(1));
    flate2::read::GzDecoder::new(bytes.as_slice())
        .take(reach)
        .read_to_end(&mut inflated)
        .map_err(|error| WeightsError::Gzip(error.to_string()))?;
    if inflated.len() > limit {
        return Err(WeightsError::InflatesPast { limit });
    }
    Ok(inflated)
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
