//! Native-only helpers shared by the CLI and the tests: the chunk files on disk, thread
//! control, and synchronous evaluation.

use std::io::Read;
use std::path::{Path, PathBuf};

use burn::tensor::{Device, Int, Tensor};

use crate::data::{
    self, ChunkEntry, ChunkError, MAX_PERSONAL_FILE_BYTES, Manifest, MnistSet,
    PERSONAL_IMAGES_FILE, PERSONAL_LABELS_FILE, PersonalSet, PersonalSetError, Split,
};
use crate::model::Classifier;
use crate::train::{Evaluation, classify_in_batches};

/// What went wrong with a file of the data, named by its path.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Data { path: PathBuf, source: ChunkError },
    #[error(
        "a validation split of {val} images leaves none of the {train} training images to train on"
    )]
    ValidationTooLarge { val: usize, train: usize },
    #[error("the CPU thread pool: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
    #[error("{}: {source}", dir.display())]
    Personal {
        dir: PathBuf,
        source: PersonalSetError,
    },
    #[error("{}: more than the {MAX_PERSONAL_FILE_BYTES} bytes any personal set takes", path.display())]
    PersonalFileTooLarge { path: PathBuf, bytes: u64 },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> NativeError + use<> {
    let path = path.to_path_buf();
    move |source| NativeError::Io { path, source }
}

fn data_error(path: &Path) -> impl FnOnce(ChunkError) -> NativeError + use<> {
    let path = path.to_path_buf();
    move |source| NativeError::Data { path, source }
}

/// Where the repository keeps the chunks the page fetches.
pub fn default_data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("www/mnist")
}

pub fn read_manifest(dir: &Path) -> Result<Manifest, NativeError> {
    let path = dir.join("manifest.json");
    let json = std::fs::read_to_string(&path).map_err(io(&path))?;
    Manifest::parse(&json).map_err(data_error(&path))
}

/// A person's own set in `dir`, as the page exports it ([`PERSONAL_IMAGES_FILE`] and
/// [`PERSONAL_LABELS_FILE`]); each file's size checked before it is read.
pub fn load_personal(dir: &Path) -> Result<PersonalSet, NativeError> {
    let read = |name: &str| -> Result<Vec<u8>, NativeError> {
        let path = dir.join(name);
        // Read no further than a set can be (a FIFO or a /proc file says 0 bytes).
        let file = std::fs::File::open(&path).map_err(io(&path))?;
        let mut bytes = Vec::new();
        file.take(MAX_PERSONAL_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io(&path))?;
        if bytes.len() as u64 > MAX_PERSONAL_FILE_BYTES {
            let bytes = bytes.len() as u64;
            return Err(NativeError::PersonalFileTooLarge { path, bytes });
        }
        Ok(bytes)
    };
    let (images, labels) = (read(PERSONAL_IMAGES_FILE)?, read(PERSONAL_LABELS_FILE)?);
    PersonalSet::from_idx_gz(&images, &labels).map_err(|source| NativeError::Personal {
        dir: dir.to_path_buf(),
        source,
    })
}

/// Reads and verifies every chunk of a split.
pub fn load_split(dir: &Path, split: Split) -> Result<MnistSet, NativeError> {
    let manifest = read_manifest(dir)?;
    let mut set = MnistSet::default();
    for entry in manifest.chunks(split) {
        set.extend(&load_chunk(dir, entry)?);
    }
    Ok(set)
}

/// The images a run trains on and the images it selects by: the training split without its
/// last `val` images, and those images. `val` 0 holds nothing out.
pub fn load_train_and_validation(
    dir: &Path,
    val: usize,
) -> Result<(MnistSet, MnistSet), NativeError> {
    let train = load_split(dir, Split::Train)?;
    let Some(kept) = train.len().checked_sub(val).filter(|&kept| kept > 0) else {
        return Err(NativeError::ValidationTooLarge {
            val,
            train: train.len(),
        });
    };
    Ok((train.slice(0..kept), train.slice(kept..train.len())))
}

pub fn load_chunk(dir: &Path, entry: &ChunkEntry) -> Result<MnistSet, NativeError> {
    let path = dir.join(&entry.file);
    let bytes = std::fs::read(&path).map_err(io(&path))?;
    data::decode_chunk(&bytes, entry).map_err(data_error(&path))
}

/// Writes the chunks and the manifest for both splits; the same input gives the same bytes.
pub fn write_chunks(
    out: &Path,
    train: &MnistSet,
    test: &MnistSet,
    items_per_chunk: usize,
) -> Result<Manifest, NativeError> {
    std::fs::create_dir_all(out).map_err(io(out))?;
    let write_split = |name: &str, set: &MnistSet| -> Result<Vec<ChunkEntry>, NativeError> {
        let mut entries = Vec::new();
        for (index, start) in (0..set.len()).step_by(items_per_chunk).enumerate() {
            let part = set.slice(start..(start + items_per_chunk).min(set.len()));
            let bytes = data::encode_chunk(&part);
            let file = format!("{name}-{index:03}.bin");
            let path = out.join(&file);
            std::fs::write(&path, &bytes).map_err(io(&path))?;
            entries.push(ChunkEntry {
                file,
                items: part.len(),
                bytes: bytes.len(),
                sha256: data::sha256_hex(&bytes),
            });
        }
        Ok(entries)
    };
    let manifest = Manifest {
        format: data::MANIFEST_FORMAT.to_string(),
        image_side: data::IMAGE_SIDE,
        train: write_split("train", train)?,
        test: write_split("test", test)?,
    };
    let json = serde_json::to_string_pretty(&manifest).expect("a manifest serialises") + "\n";
    let path = out.join("manifest.json");
    std::fs::write(&path, json).map_err(io(&path))?;
    Ok(manifest)
}

/// Sizes the CPU backend's thread pool; call before any tensor work.
pub fn set_threads(threads: usize) -> Result<(), NativeError> {
    Ok(rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()?)
}

/// Keeps freed tensor buffers in the process instead of handing them back to the kernel.
///
/// A training step allocates and frees the same few hundred buffers every time, many above
/// glibc's default mmap threshold (128 KiB, rising only as big blocks are freed): each then
/// came from fresh `mmap`ed pages and cost page faults and zeroing, ~10 % of a seed-preset
/// step (`perf`). Peak memory is unchanged; only the churn goes.
///
/// The pool's threads allocate from arenas of their own, made of 64 MiB heaps whose free top
/// glibc hands back (shrinking or unmapping the heap) once it exceeds `M_TOP_PAD` (128 KiB
/// by default), whatever the trim threshold. A distilling step (a teacher's pass and the
/// student's on each half of the batch) emptied and refilled such heaps every step: page
/// faults, zeroing and TLB shootdowns took ~15 % of it (`perf`). A pad of 256 MiB took the
/// distilled lab preset (batch 128, 2 threads) from 424–454 to 598–607 images/s and left the
/// seed preset's speed and every peak alone. The pad is address space, not memory: pages are
/// touched only when used.
pub fn keep_freed_memory() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes allocator settings; it is called before other threads run.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_TOP_PAD, 256 << 20);
    }
}

/// Lets a closed pipe end the process quietly, as it ends other command-line tools
/// (`vit eval | head -1`): Rust ignores SIGPIPE, so `println!` would panic instead.
pub fn quit_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: restores the default action of one signal before other threads run.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Accuracy and confusion matrix of `model` on `set`, in batches.
pub fn evaluate(
    model: &Classifier,
    set: &MnistSet,
    batch_size: usize,
    classes: usize,
    device: &Device,
) -> Evaluation {
    let mut evaluation = Evaluation::new(classes);
    let indices: Vec<usize> = (0..set.len()).collect();
    for (batch, predicted) in classify_in_batches(model, set, &indices, batch_size, device) {
        let labels: Vec<u8> = batch.iter().map(|&i| set.labels[i]).collect();
        evaluation.record(&labels, &read_ints(predicted));
    }
    evaluation
}

/// An integer tensor's values, read back synchronously.
pub fn read_ints(tensor: Tensor<1, Int>) -> Vec<i64> {
    tensor
        .into_data()
        .convert::<i64>()
        .try_into_vec::<i64>()
        .expect("integers convert to i64")
}
