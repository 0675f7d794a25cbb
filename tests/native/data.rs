use std::path::Path;

use vitlab::data::{self, ChunkError, MnistSet, Split};
use vitlab::native;

fn tiny_set(count: usize) -> MnistSet {
    MnistSet {
        images: (0..count * data::IMAGE_PIXELS)
            .map(|i| (i * 37 % 256) as u8)
            .collect(),
        labels: (0..count).map(|i| (i % 10) as u8).collect(),
    }
}

fn entry_for(bytes: &[u8], items: usize) -> data::ChunkEntry {
    data::ChunkEntry {
        file: "x.bin".into(),
        items,
        bytes: bytes.len(),
        sha256: data::sha256_hex(bytes),
    }
}

#[test]
fn a_chunk_round_trips_and_encodes_deterministically() {
    let set = tiny_set(30);
    let bytes = data::encode_chunk(&set);
    assert_eq!(bytes, data::encode_chunk(&set));
    assert_eq!(
        data::decode_chunk(&bytes, &entry_for(&bytes, 30)).unwrap(),
        set
    );
}

#[test]
fn a_flipped_byte_is_detected() {
    let bytes = data::encode_chunk(&tiny_set(30));
    let entry = entry_for(&bytes, 30);
    for position in [0, bytes.len() / 2, bytes.len() - 1] {
        let mut damaged = bytes.clone();
        damaged[position] ^= 0x40;
        assert!(matches!(
            data::decode_chunk(&damaged, &entry),
            Err(ChunkError::Checksum { .. })
        ));
        // Without the checksum the format itself still refuses it or decodes other data.
        if let Ok(decoded) = data::decode_chunk_unverified(&damaged) {
            assert_ne!(decoded, tiny_set(30));
        }
    }
}

#[test]
fn truncated_and_miscounted_chunks_are_errors() {
    let bytes = data::encode_chunk(&tiny_set(30));
    let cut = &bytes[..bytes.len() / 2];
    assert!(data::decode_chunk_unverified(cut).is_err());
    assert!(matches!(
        data::decode_chunk(&bytes, &entry_for(&bytes, 31)),
        Err(ChunkError::Count {
            expected: 31,
            actual: 30
        })
    ));
    // A well-formed stream that is not a chunk.
    let other = miniz_oxide::deflate::compress_to_vec(b"hello, this is not MNIST", 6);
    assert_eq!(
        data::decode_chunk_unverified(&other),
        Err(ChunkError::Magic)
    );
}

/// `decoder` stepped `work` bytes at a time; the slices it took and what it answered.
fn stepped(
    mut decoder: data::ChunkDecoder<'_>,
    work: usize,
) -> (usize, Result<MnistSet, ChunkError>) {
    let mut slices = 1;
    loop {
        if let Some(decoded) = decoder.step(work) {
            assert!(decoder.step(work).is_none(), "a decoder answers once");
            return (slices, decoded);
        }
        slices += 1;
    }
}

#[test]
fn a_chunk_decoded_in_slices_is_the_chunk_decoded_at_once() {
    let dir = native::default_data_dir();
    let entry = native::read_manifest(&dir).unwrap().test[0].clone();
    let bytes = std::fs::read(dir.join(&entry.file)).unwrap();
    let whole = data::decode_chunk(&bytes, &entry).unwrap();
    let inflated = 12 + entry.items * (1 + data::IMAGE_PIXELS);
    for work in [1 << 10, data::UI_SLICE_BYTES, 1 << 20] {
        let (slices, sliced) = stepped(data::ChunkDecoder::verified(&bytes, &entry), work);
        assert_eq!(sliced.unwrap(), whole, "{work}-byte slices");
        // Hashing the file and inflating it, never more than `work` bytes a slice.
        assert!(
            slices >= bytes.len().div_ceil(work) + inflated.div_ceil(work),
            "{slices} slices of {work} bytes"
        );
    }
    // The same answer for damaged chunks, whichever check catches them.
    let mut entry_off_by_one = entry.clone();
    entry_off_by_one.items += 1;
    let small = data::encode_chunk(&tiny_set(30));
    let cases: [(&[u8], Option<&data::ChunkEntry>); 4] = [
        (&bytes, Some(&entry_off_by_one)),
        (&bytes[..bytes.len() / 2], None),
        (&small[..small.len() - 3], None),
        (&bytes, None),
    ];
    for (case, (bytes, entry)) in cases.into_iter().enumerate() {
        let decoder = || match entry {
            Some(entry) => data::ChunkDecoder::verified(bytes, entry),
            None => data::ChunkDecoder::unverified(bytes),
        };
        assert_eq!(
            stepped(decoder(), 4096).1,
            decoder().finish(),
            "case {case}"
        );
    }
}

#[test]
fn the_repository_holds_all_of_mnist_in_small_verified_chunks() {
    let dir = native::default_data_dir();
    let manifest = native::read_manifest(&dir).unwrap();
    assert_eq!(manifest.items(Split::Train), 60_000);
    assert_eq!(manifest.items(Split::Test), 10_000);
    for entry in manifest.train.iter().chain(&manifest.test) {
        assert!(
            entry.bytes <= 1_000_000,
            "{} is {} bytes",
            entry.file,
            entry.bytes
        );
        assert_eq!(
            std::fs::metadata(dir.join(&entry.file)).unwrap().len() as usize,
            entry.bytes
        );
    }
    let test = native::load_split(&dir, Split::Test).unwrap();
    let mut counts = [0usize; 10];
    for &label in &test.labels {
        counts[label as usize] += 1;
    }
    // The published MNIST test distribution (shared/data/mnist/SOURCE.md).
    assert_eq!(
        counts,
        [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    );
}

/// `vit prepare-data` from the IDX files in `idx` into `out`, with `extra` options.
fn prepare_data(idx: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_vit"))
        .arg("prepare-data")
        .args(extra)
        .arg("--idx")
        .arg(idx)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

/// `vit prepare-data` regenerates the committed chunks byte for byte from the IDX files.
#[test]
fn regenerating_from_idx_reproduces_the_committed_chunks() {
    let idx = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/mnist");
    if !idx.join("t10k-images-idx3-ubyte.gz").exists() {
        eprintln!("skipped: no IDX files at {}", idx.display());
        return;
    }
    let out = std::env::temp_dir().join(format!("vitlab-chunks-{}", std::process::id()));
    let output = prepare_data(&idx, &out, &[]);
    assert!(output.status.success(), "{output:?}");
    let committed = native::default_data_dir();
    let manifest = native::read_manifest(&committed).unwrap();
    assert_eq!(native::read_manifest(&out).unwrap(), manifest);
    for entry in manifest.train.iter().chain(&manifest.test) {
        assert_eq!(
            std::fs::read(out.join(&entry.file)).unwrap(),
            std::fs::read(committed.join(&entry.file)).unwrap(),
            "{}",
            entry.file
        );
    }
    std::fs::remove_dir_all(out).unwrap();
}

/// Writes `set` as IDX files named for `split` in `dir`, gzipped or not (the MNIST site's
/// files are gzipped; unpacked copies are common too).
fn write_idx(dir: &Path, split: Split, set: &MnistSet, gzip: bool) {
    use std::io::Write;
    let (images_name, labels_name) = match split {
        Split::Train => ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
        Split::Test => ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
    };
    let count = (set.len() as u32).to_be_bytes();
    let side = (data::IMAGE_SIDE as u32).to_be_bytes();
    let images = [
        &2051u32.to_be_bytes()[..],
        &count,
        &side,
        &side,
        &set.images,
    ]
    .concat();
    let labels = [&2049u32.to_be_bytes()[..], &count, &set.labels].concat();
    for (name, bytes) in [(images_name, images), (labels_name, labels)] {
        if gzip {
            let file = std::fs::File::create(dir.join(format!("{name}.gz"))).unwrap();
            let mut encoder = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
            encoder.write_all(&bytes).unwrap();
            encoder.finish().unwrap();
        } else {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
    }
}

/// IDX files that hold no images are refused, and nothing is written.
#[test]
fn prepare_data_refuses_idx_files_without_images() {
    let root = std::env::temp_dir().join(format!("vitlab-idx-empty-{}", std::process::id()));
    let (idx, out) = (root.join("idx"), root.join("chunks"));
    std::fs::create_dir_all(&idx).unwrap();
    write_idx(&idx, Split::Train, &tiny_set(0), false);
    write_idx(&idx, Split::Test, &tiny_set(5), false);
    let output = prepare_data(&idx, &out, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("0 training and 5 test images"), "{stderr}");
    assert!(!out.join("manifest.json").exists());
    std::fs::remove_dir_all(root).unwrap();
}

/// The same tool on small made-up IDX files, so it is tested where `../shared` is absent.
#[test]
fn prepare_data_turns_idx_files_into_chunks_the_loader_reads_back() {
    let root = std::env::temp_dir().join(format!("vitlab-idx-{}", std::process::id()));
    let (idx, out) = (root.join("idx"), root.join("chunks"));
    std::fs::create_dir_all(&idx).unwrap();
    let train = tiny_set(250);
    let mut test = tiny_set(70);
    test.images
        .iter_mut()
        .for_each(|pixel| *pixel = 255 - *pixel);
    write_idx(&idx, Split::Train, &train, true);
    write_idx(&idx, Split::Test, &test, false);

    let output = prepare_data(&idx, &out, &["--chunk-items", "100"]);
    assert!(output.status.success(), "{output:?}");
    let manifest = native::read_manifest(&out).unwrap();
    let sizes = |chunks: &[data::ChunkEntry]| chunks.iter().map(|c| c.items).collect::<Vec<_>>();
    assert_eq!(sizes(&manifest.train), [100, 100, 50]);
    assert_eq!(sizes(&manifest.test), [70]);
    assert_eq!(native::load_split(&out, Split::Train).unwrap(), train);
    assert_eq!(native::load_split(&out, Split::Test).unwrap(), test);

    // Files that are not 28×28 MNIST are refused with their name, and no chunks are written.
    let bad = root.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    let mut wrong_label = tiny_set(5);
    wrong_label.labels[3] = 10;
    write_idx(&bad, Split::Train, &wrong_label, false);
    write_idx(&bad, Split::Test, &test, false);
    let output = prepare_data(&bad, &root.join("bad-chunks"), &["--chunk-items", "100"]);
    assert!(!output.status.success());
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        message.contains("train-labels-idx1-ubyte has a label above 9"),
        "{message}"
    );
    assert!(!root.join("bad-chunks").join("manifest.json").exists());
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn the_identity_transform_keeps_the_image_and_a_shift_moves_it() {
    let set = tiny_set(1);
    let image = set.image(0);
    assert_eq!(
        data::transform(image, 0.0, 1.0, 0.0, 0.0).to_vec(),
        image.to_vec()
    );
    let shifted = data::transform(image, 0.0, 1.0, 2.0, 0.0);
    for y in 0..data::IMAGE_SIDE {
        for x in 2..data::IMAGE_SIDE {
            assert_eq!(shifted[y * 28 + x], image[y * 28 + x - 2]);
        }
        assert_eq!(shifted[y * 28], 0);
    }
}

#[test]
fn augmentation_never_mirrors_and_stays_close() {
    // A real digit moved by the default augmentation keeps most of its ink where it was.
    let dir = native::default_data_dir();
    let manifest = native::read_manifest(&dir).unwrap();
    let set = native::load_chunk(&dir, &manifest.test[0]).unwrap();
    let mut rng = vitlab::rng::SplitMix64::new(5);
    let augmentation = data::Augmentation::default();
    for index in 0..20 {
        let original = set.image(index);
        let moved = augmentation.apply(original, &mut rng);
        assert_ne!(moved.to_vec(), original.to_vec());
        let ink = |img: &[u8]| img.iter().map(|&p| p as f32).sum::<f32>();
        let ratio = ink(&moved) / ink(original);
        assert!((0.7..1.35).contains(&ratio), "ink ratio {ratio}");
    }
    // An L in the top-left corner (a bar down the left, a bar along the top) stays there:
    // never mirrored left-right or upside down.
    let mut corner = [0u8; 784];
    for i in 3..17 {
        for w in 3..6 {
            corner[i * 28 + w] = 255; // down the left
            corner[w * 28 + i] = 255; // along the top
        }
    }
    let centre = |img: &[u8]| {
        let (mass, x, y) = img
            .iter()
            .enumerate()
            .fold((0.0, 0.0, 0.0), |(m, x, y), (i, &p)| {
                let p = p as f32;
                (m + p, x + p * (i % 28) as f32, y + p * (i / 28) as f32)
            });
        (x / mass, y / mass)
    };
    let (x0, y0) = centre(&corner);
    assert!(x0 < 8.0 && y0 < 8.0, "the probe itself: ({x0}, {y0})");
    // A mirror would put it past 19; shifts, turns and scaling move it a few pixels.
    for _ in 0..50 {
        let (x, y) = centre(&augmentation.apply(&corner, &mut rng));
        assert!(x < 13.5 && y < 13.5, "centre of mass moved to ({x}, {y})");
    }
}
