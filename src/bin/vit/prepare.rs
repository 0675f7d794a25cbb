//! `vit prepare-data`: the original IDX files as the chunks and manifest the page fetches.

use std::path::PathBuf;

use vitlab::data::Split;
use vitlab::native;

use crate::error::CliError;

pub fn prepare_data(idx: PathBuf, out: PathBuf, chunk_items: usize) -> Result<(), CliError> {
    if chunk_items == 0 {
        return Err(CliError::NoChunkItems);
    }
    let train = vitlab::data::idx::read_split(&idx, Split::Train)?;
    let test = vitlab::data::idx::read_split(&idx, Split::Test)?;
    // An empty data set would be written without a word, and refused only by whatever reads it.
    if train.is_empty() || test.is_empty() {
        return Err(CliError::NoImages {
            train: train.len(),
            test: test.len(),
        });
    }
    let manifest = native::write_chunks(&out, &train, &test, chunk_items)?;
    let bytes: usize = manifest
        .train
        .iter()
        .chain(&manifest.test)
        .map(|c| c.bytes)
        .sum();
    println!(
        "wrote {} train and {} test chunks ({} + {} images, {:.1} MB) to {}",
        manifest.train.len(),
        manifest.test.len(),
        train.len(),
        test.len(),
        bytes as f64 / 1e6,
        out.display()
    );
    Ok(())
}
