//! `vit average`: the element-wise mean of weights files of one config.

use std::path::PathBuf;

use vitlab::weights;

use crate::error::CliError;
use crate::files::{read_weights, write_atomically};

pub fn average(out: PathBuf, paths: Vec<PathBuf>) -> Result<(), CliError> {
    let files = paths
        .iter()
        .map(|path| read_weights(path))
        .collect::<Result<Vec<_>, _>>()?;
    let averaged = weights::average(&files)?;
    write_atomically(&out, &weights::encode(&averaged.config, &averaged.tensors))?;
    println!(
        "the mean of {} files written to {}",
        files.len(),
        out.display()
    );
    Ok(())
}
