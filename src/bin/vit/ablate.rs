//! `vit ablate`: which heads matter (`analysis::ablation`), as a table of the accuracy each
//! head's absence costs, optionally CSV and JSON: the model card's table.

use std::path::Path;
use std::time::Instant;

use vitlab::analysis::ablation::{head_importance_async, head_means_async};
use vitlab::data::{IMAGE_PIXELS, Split};
use vitlab::model::{Classifier, Replacement};
use vitlab::native;

use crate::args::{Common, ReplacementChoice};
use crate::error::CliError;
use crate::files::{read_weights, write_atomically};
use crate::setup;

/// What `vit ablate` measures.
pub struct Measure {
    pub images: usize,
    pub replacement: ReplacementChoice,
    pub mean_images: usize,
}

pub fn ablate(
    weights: &Path,
    measure: Measure,
    csv: Option<&Path>,
    json: bool,
    common: &Common,
) -> Result<(), CliError> {
    let (data_dir, device) = setup(common)?;
    let file = read_weights(weights)?;
    let not_a_vit = || CliError::NotAVit {
        path: weights.to_path_buf(),
    };
    let config = file.config.vit().cloned().ok_or_else(not_a_vit)?;
    let Classifier::Vit(model) = file.into_model(&device) else {
        return Err(not_a_vit());
    };
    let test = native::load_split(&data_dir, Split::Test)?;
    let first = |count: usize| -> Vec<[u8; IMAGE_PIXELS]> {
        (0..count.min(test.len()))
            .filter_map(|i| test.image(i).try_into().ok())
            .collect()
    };
    let images = first(measure.images);
    let labels = &test.labels[..images.len()];
    let started = Instant::now();
    let (replacement, means) = match measure.replacement {
        ReplacementChoice::Zero => (Replacement::Zero, None),
        ReplacementChoice::Mean => {
            let over = first(measure.mean_images);
            let future = head_means_async(&model, &config, &over, &device);
            let means = futures::executor::block_on(future).map_err(CliError::Ablate)?;
            (Replacement::Mean, Some(means))
        }
    };
    let future = head_importance_async(
        &model,
        &config,
        (&images, labels),
        replacement,
        means.as_ref(),
        &device,
    );
    let importance = futures::executor::block_on(future).map_err(CliError::Ablate)?;
    println!(
        "{} test images, accuracy {:.2}% with every head; points lost with one head switched off ({:?}, {:.1} s):",
        images.len(),
        100.0 * importance.baseline,
        replacement,
        started.elapsed().as_secs_f64(),
    );
    let header: Vec<String> = (1..=config.heads)
        .map(|h| format!("{:>7}", format!("h{h}")))
        .collect();
    println!("layer {}", header.join(""));
    for (l, heads) in importance.lost().iter().enumerate() {
        let row: Vec<String> = heads
            .iter()
            .map(|lost| format!("{:>7.2}", 100.0 * lost))
            .collect();
        println!("{:>5} {}", l + 1, row.join(""));
    }
    if let Some(path) = csv {
        write_atomically(path, importance.csv().as_bytes())?;
    }
    if json {
        println!(
            "{}",
            serde_json::json!({
                "weights": weights.display().to_string(),
                "importance": importance,
            })
        );
    }
    Ok(())
}
