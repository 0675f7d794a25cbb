//! The shipped weights' gzip (`weights::ungzipped`): inflated within a bound, at once or in
//! steps, and a broken file said to be one.

use std::io::Write;

use vitlab::weights::{Ungzipping, WeightsError, ungzipped};

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
