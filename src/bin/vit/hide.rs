//! `vit hide`: both models' readings of one image with some of the ViT's patches hidden
//! (`analysis::occlusion::compare_async`), the numbers the lab's "patches hidden" card shows.

use std::path::Path;

use vitlab::analysis::occlusion::compare_async;
use vitlab::data::IMAGE_PIXELS;
use vitlab::model::Classifier;

use crate::args::Common;
use crate::error::CliError;
use crate::files::read_weights;
use crate::setup;

pub fn hide(
    vit: &Path,
    cnn: &Path,
    image: &Path,
    hidden: &[usize],
    json: bool,
    common: &Common,
) -> Result<(), CliError> {
    let (_, device) = setup(common)?;
    let pixels = read_image(image)?;
    let vit_file = read_weights(vit)?;
    let not_a_vit = || CliError::NotAVit {
        path: vit.to_path_buf(),
    };
    let grid = vit_file.config.vit().ok_or_else(not_a_vit)?.grid_size();
    let patches = grid * grid;
    if let Some(&patch) = hidden.iter().find(|&&patch| patch >= patches) {
        return Err(CliError::HiddenPatch { patch, patches });
    }
    let Classifier::Vit(vit_model) = vit_file.into_model(&device) else {
        return Err(not_a_vit());
    };
    let cnn_model = read_weights(cnn)?.into_model(&device);
    let future = compare_async(&vit_model, &cnn_model, &pixels, hidden, &device);
    let comparison = futures::executor::block_on(future).map_err(CliError::Occlusion)?;
    // The line the lab's card shows.
    println!("{}", comparison.summary(hidden.len()));
    if json {
        println!(
            "{}",
            serde_json::json!({ "hidden": hidden, "comparison": comparison })
        );
    }
    Ok(())
}

/// The model's input from `path`: exactly 784 bytes, its size checked before it is read.
pub fn read_image(path: &Path) -> Result<[u8; IMAGE_PIXELS], CliError> {
    let bytes = std::fs::metadata(path).map_err(CliError::file(path))?.len();
    let wrong_size = || CliError::ImageSize {
        path: path.to_path_buf(),
        bytes,
        expected: IMAGE_PIXELS,
    };
    if bytes != IMAGE_PIXELS as u64 {
        return Err(wrong_size());
    }
    let pixels = std::fs::read(path).map_err(CliError::file(path))?;
    pixels.try_into().map_err(|_| wrong_size())
}
