//! `vit classify`: one image's probabilities, with heads of the ViT switched off if asked, as
//! the lab's prediction shows them (the same forward pass, the same heads' means).

use std::path::Path;

use burn::tensor::activation::softmax;
use vitlab::analysis::ablation::head_means_async;
use vitlab::data::{IMAGE_PIXELS, Split, images_tensor};
use vitlab::model::{Ablation, Classifier, HeadsOff, Replacement};
use vitlab::native;

use crate::args::Common;
use crate::error::CliError;
use crate::files::read_weights;
use crate::hide::read_image;
use crate::setup;

/// The heads `vit classify` switches off, and over how many test digits their means are
/// taken.
pub struct SwitchOff {
    pub heads: HeadsOff,
    pub mean_images: usize,
}

pub fn classify(
    weights: &Path,
    image: &Path,
    off: SwitchOff,
    json: bool,
    common: &Common,
) -> Result<(), CliError> {
    let (data_dir, device) = setup(common)?;
    let pixels = read_image(image)?;
    let file = read_weights(weights)?;
    let config = file.config.vit().cloned();
    let input = images_tensor(&[pixels], &device); // [1, 1, 28, 28]
    let logits = match (file.into_model(&device), config) {
        (model, _) if off.heads.is_empty() => model.forward(input), // [1, C]
        (Classifier::Vit(model), Some(config)) => {
            // The heads are checked before any mean is taken (zero needs none).
            let heads_only = HeadsOff::new(off.heads.heads(), Replacement::Zero);
            Ablation::of(&config, &heads_only, None, &device).map_err(CliError::HeadsOff)?;
            let means = match off.heads.replacement {
                Replacement::Zero => None,
                Replacement::Mean => {
                    let test = native::load_split(&data_dir, Split::Test)?;
                    let over: Vec<[u8; IMAGE_PIXELS]> = (0..off.mean_images.min(test.len()))
                        .filter_map(|i| test.image(i).try_into().ok())
                        .collect();
                    let future = head_means_async(&model, &config, &over, &device);
                    Some(futures::executor::block_on(future).map_err(CliError::Ablate)?)
                }
            };
            let ablation = Ablation::of(&config, &off.heads, means.as_ref(), &device)
                .map_err(CliError::HeadsOff)?;
            model.forward_ablated(input, &ablation) // [1, C]
        }
        _ => {
            return Err(CliError::NotAVit {
                path: weights.to_path_buf(),
            });
        }
    };
    let probabilities: Vec<f32> = softmax(logits.clone(), 1)
        .into_data()
        .try_to_vec()
        .unwrap_or_default();
    let logits: Vec<f32> = logits.into_data().try_to_vec().unwrap_or_default();
    let predicted = vitlab::analysis::inference::most_probable(&probabilities);
    let shown: Vec<String> = probabilities.iter().map(|p| format!("{p:.4}")).collect();
    println!(
        "a {predicted} ({:.1}%), heads off: {}; probabilities {}",
        100.0 * probabilities.get(predicted).copied().unwrap_or(0.0),
        if off.heads.is_empty() {
            "none".into()
        } else {
            off.heads.to_param()
        },
        shown.join(" ")
    );
    if json {
        println!(
            "{}",
            serde_json::json!({
                "predicted": predicted,
                "probabilities": probabilities,
                "logits": logits,
                "off": off.heads.to_param(),
                "replacement": off.heads.replacement.param(),
            })
        );
    }
    Ok(())
}
