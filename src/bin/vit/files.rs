//! Files as `vit` reads and writes them: weights checked and named, writes that never leave
//! half a file, and the names of a run's checkpoint and per-epoch weights.

use std::path::{Path, PathBuf};

use vitlab::model::Budget;
use vitlab::weights::{self, WeightsFile};

use crate::error::CliError;

/// A weights file, read and checked; errors name the file.
pub fn read_weights(path: &Path) -> Result<WeightsFile, CliError> {
    let bytes = std::fs::read(path).map_err(CliError::file(path))?;
    weights::decode_within(&bytes, &Budget::CLI).map_err(|source| CliError::Weights {
        path: path.to_path_buf(),
        source,
    })
}

/// `vit.safetensors` after epoch 7: `vit.epoch7.safetensors`.
pub fn epoch_path(out: &Path, epoch: usize) -> PathBuf {
    let stem = out.file_stem().unwrap_or_default().to_string_lossy();
    let name = match out.extension() {
        Some(extension) => format!("{stem}.epoch{epoch}.{}", extension.to_string_lossy()),
        None => format!("{stem}.epoch{epoch}"),
    };
    out.with_file_name(name)
}

/// Writes via a temporary file and a rename, so an interrupted write never leaves a
/// half-written file where the last good one was.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".partial");
    std::fs::write(&temporary, bytes).map_err(CliError::file(path))?;
    std::fs::rename(&temporary, path).map_err(CliError::file(path))
}
