//! `vit occlusion`: the patch-occlusion curves of a ViT beside a CNN (`analysis::occlusion`),
//! as a table and optionally JSON: the model card's figures.

use std::path::PathBuf;
use std::time::Instant;

use vitlab::analysis::occlusion::occlusion_curves_async;
use vitlab::data::{IMAGE_PIXELS, Split};
use vitlab::native;

use crate::args::Common;
use crate::error::CliError;
use crate::files::read_weights;
use crate::setup;

pub fn occlusion(
    vit: PathBuf,
    cnn: PathBuf,
    images: usize,
    seed: u64,
    json: bool,
    common: Common,
) -> Result<(), CliError> {
    let (data_dir, device) = setup(&common)?;
    let (vit_file, cnn_file) = (read_weights(&vit)?, read_weights(&cnn)?);
    let test = native::load_split(&data_dir, Split::Test)?;
    let count = images.min(test.len());
    let pixels: Vec<[u8; IMAGE_PIXELS]> = (0..count)
        .filter_map(|i| test.image(i).try_into().ok())
        .collect();
    let labels = test.labels[..count].to_vec();
    let started = Instant::now();
    let future = occlusion_curves_async(&vit_file, &cnn_file, &pixels, &labels, &device, seed);
    let curves = futures::executor::block_on(future).map_err(CliError::Occlusion)?;
    println!(
        "{count} test images, patches of a {grid}×{grid} grid hidden ({:.1} s)",
        started.elapsed().as_secs_f64(),
        grid = curves.grid,
    );
    let series = curves.series();
    let names: Vec<String> = series
        .iter()
        .map(|(name, _)| format!("{name:>9}"))
        .collect();
    println!("hidden  {}", names.join("  "));
    for (i, fraction) in curves.fractions.iter().enumerate() {
        let values: Vec<String> = series
            .iter()
            .map(|(name, curve)| {
                let value = 100.0 * curve.get(i).copied().unwrap_or(f32::NAN);
                format!("{value:>width$.2}%", width = name.len().max(9) - 1)
            })
            .collect();
        println!("{:>5.0}%  {}", 100.0 * fraction, values.join("  "));
    }
    if json {
        println!(
            "{}",
            serde_json::json!({
                "vit": vit.display().to_string(),
                "cnn": cnn.display().to_string(),
                "seed": seed,
                "curves": curves,
            })
        );
    }
    Ok(())
}
