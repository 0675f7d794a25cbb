//! A person's own digits as MNIST's IDX files (gzip): the bytes any MNIST tool reads, the same
//! set back, and hostile pairs refused before anything of their claimed size is allocated.

use std::io::{Read, Write};

use vitlab::data::idx::read_split;
use vitlab::data::{
    IMAGE_PIXELS, IdxFile, MAX_PERSONAL_DIGITS, PersonalSet, PersonalSetError, Split,
};

fn set(count: usize) -> PersonalSet {
    PersonalSet {
        images: (0..count)
            .map(|n| std::array::from_fn(|i| ((i * 31 + n * 7) % 256) as u8))
            .collect(),
        labels: (0..count).map(|n| (n % 10) as u8).collect(),
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// An IDX pair written by hand: `count` in both headers, `images` and `labels` as given.
fn idx_pair(
    magic: (u32, u32),
    count: (u32, u32),
    side: u32,
    images: &[u8],
    labels: &[u8],
) -> (Vec<u8>, Vec<u8>) {
    let mut image_file = Vec::new();
    for field in [magic.0, count.0, side, side] {
        image_file.extend_from_slice(&field.to_be_bytes());
    }
    image_file.extend_from_slice(images);
    let mut label_file = Vec::new();
    for field in [magic.1, count.1] {
        label_file.extend_from_slice(&field.to_be_bytes());
    }
    label_file.extend_from_slice(labels);
    (gzip(&image_file), gzip(&label_file))
}

#[test]
fn a_set_exported_reads_back_the_same_and_exports_to_the_same_bytes() {
    for count in [0, 1, 23] {
        let original = set(count);
        let (images, labels) = original.to_idx_gz();
        let read = PersonalSet::from_idx_gz(&images, &labels).unwrap();
        assert_eq!(read, original);
        assert_eq!(read.to_idx_gz(), (images, labels), "{count} digits");
    }
    // Each file's header counts its own items: a set with a label missing says so when read.
    let mut uneven = set(2);
    uneven.labels.pop();
    let (images, labels) = uneven.to_idx_gz();
    assert_eq!(&gunzip(&labels)[..8], &[0, 0, 8, 1, 0, 0, 0, 1]);
    assert_eq!(
        PersonalSet::from_idx_gz(&images, &labels).unwrap_err(),
        PersonalSetError::Lengths {
            images: 2,
            labels: 1
        }
    );
}

#[test]
fn the_files_are_mnist_s_own_and_the_native_idx_reader_reads_them() {
    let original = set(12);
    let (images, labels) = original.to_idx_gz();
    let raw = gunzip(&images);
    assert_eq!(
        &raw[..16],
        &[0, 0, 8, 3, 0, 0, 0, 12, 0, 0, 0, 28, 0, 0, 0, 28]
    );
    assert_eq!(raw.len(), 16 + 12 * IMAGE_PIXELS);
    assert_eq!(&gunzip(&labels)[..8], &[0, 0, 8, 1, 0, 0, 0, 12]);
    // Named as MNIST's test files, the pair is a split the tools that made the chunks read.
    let dir = std::env::temp_dir().join(format!("vitlab-personal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t10k-images-idx3-ubyte.gz"), &images).unwrap();
    std::fs::write(dir.join("t10k-labels-idx1-ubyte.gz"), &labels).unwrap();
    let split = read_split(&dir, Split::Test).unwrap();
    assert_eq!(split.labels, original.labels);
    assert_eq!(split.images, original.images.concat());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hostile_pairs_are_refused_with_their_reason() {
    let image = [7u8; IMAGE_PIXELS];
    let ok = (0x803, 0x801);
    let refused = |(images, labels): (Vec<u8>, Vec<u8>)| {
        PersonalSet::from_idx_gz(&images, &labels).unwrap_err()
    };

    assert!(matches!(
        PersonalSet::from_idx_gz(b"not gzip at all", &gzip(b"")).unwrap_err(),
        PersonalSetError::Gzip(IdxFile::Images, _)
    ));
    assert_eq!(
        refused(idx_pair((0x801, 0x801), (1, 1), 28, &image, &[3])),
        PersonalSetError::Magic {
            file: IdxFile::Images,
            magic: 0x801
        }
    );
    assert_eq!(
        refused(idx_pair(ok, (1, 1), 27, &image[..27 * 27], &[3])),
        PersonalSetError::Size { rows: 27, cols: 27 }
    );
    assert_eq!(
        refused(idx_pair(ok, (1, 2), 28, &image, &[3, 4])),
        PersonalSetError::Lengths {
            images: 1,
            labels: 2
        }
    );
    assert_eq!(
        refused(idx_pair(ok, (1, 1), 28, &image, &[10])),
        PersonalSetError::Label {
            index: 0,
            label: 10
        }
    );
    assert_eq!(
        refused(idx_pair(ok, (2, 2), 28, &image, &[3, 4])),
        PersonalSetError::Truncated(IdxFile::Images)
    );
    assert_eq!(
        refused(idx_pair(ok, (1, 1), 28, &image, &[3, 4])),
        PersonalSetError::Trailing(IdxFile::Labels)
    );
    // A header that claims four billion digits, with none behind it: refused on its count.
    assert_eq!(
        refused(idx_pair(ok, (u32::MAX, u32::MAX), 28, &[], &[])),
        PersonalSetError::TooMany {
            file: IdxFile::Images,
            count: u64::from(u32::MAX)
        }
    );
    assert!(matches!(
        refused(idx_pair(
            ok,
            (MAX_PERSONAL_DIGITS as u32 + 1, 1),
            28,
            &image,
            &[3]
        )),
        PersonalSetError::TooMany {
            file: IdxFile::Images,
            ..
        }
    ));
    // A gzip bomb: 64 MB of zeros behind a one-digit header; inflated no further than a full
    // set, and refused as longer than its header says.
    let mut bomb = Vec::new();
    for field in [0x803u32, 1, 28, 28] {
        bomb.extend_from_slice(&field.to_be_bytes());
    }
    bomb.resize(64 << 20, 0);
    let bomb = gzip(&bomb);
    assert!(bomb.len() < 1 << 20);
    assert!(matches!(
        PersonalSet::from_idx_gz(&bomb, &idx_pair(ok, (1, 1), 28, &image, &[3]).1).unwrap_err(),
        PersonalSetError::Trailing(IdxFile::Images)
    ));
    // And every message says what is wrong in words.
    let message = refused(idx_pair(ok, (1, 1), 28, &image, &[12])).to_string();
    assert_eq!(message, "digit 0 is labelled 12, not 0 to 9");
}

#[test]
fn the_two_files_are_told_apart_by_what_they_hold_in_either_order() {
    let kept = set(12);
    let (images, labels) = kept.to_idx_gz();
    assert_eq!(
        PersonalSet::from_either_idx_gz(&images, &labels),
        Ok(kept.clone())
    );
    assert_eq!(PersonalSet::from_either_idx_gz(&labels, &images), Ok(kept));
    // The labels file that is no gzip is named as the labels, whichever came first.
    let broken = b"not gzip at all".to_vec();
    for pair in [(&broken, &images), (&images, &broken)] {
        assert!(matches!(
            PersonalSet::from_either_idx_gz(pair.0, pair.1),
            Err(PersonalSetError::Gzip(IdxFile::Labels, _))
        ));
    }
    // Two images files: the second is no labels file.
    assert!(matches!(
        PersonalSet::from_either_idx_gz(&images, &images),
        Err(PersonalSetError::Magic {
            file: IdxFile::Labels,
            ..
        })
    ));
}

/// A fine-tuning holds a fold of the set out, to score it before and after: each digit is
/// held out by exactly one fold.
#[test]
fn each_digit_is_held_out_by_one_fold_and_the_rest_trained_on() {
    let all = set(7);
    let (trained, held_out) = all.fold(3, 2);
    assert_eq!(held_out.labels, [2, 5]);
    assert_eq!(held_out.images, [all.images[2], all.images[5]]);
    assert_eq!(trained.labels, [0, 1, 3, 4, 6]);
    assert_eq!(trained.images[2], all.images[3]);
    let folds: Vec<Vec<u8>> = (0..3).map(|fold| all.fold(3, fold).1.labels).collect();
    assert_eq!(folds, [vec![0, 3, 6], vec![1, 4], vec![2, 5]]);
    for folds in [0, 1] {
        let (trained, held_out) = all.fold(folds, 0);
        assert_eq!(trained, all);
        assert!(held_out.is_empty());
    }
}
