//! `vit classify`: one image's probabilities, with heads of the ViT switched off if asked, as
//! the lab's prediction shows them (the same forward pass, the same heads' means); and with
//! `--story`, its path through the ViT as the lab's story tells it (`analysis::story`).

use std::path::Path;

use burn::tensor::activation::softmax;
use vitlab::analysis::ablation::head_means_async;
use vitlab::analysis::story::{self, Story};
use vitlab::data::{IMAGE_PIXELS, Split, images_tensor};
use vitlab::model::{Ablation, Classifier, HeadsOff, Replacement, VitConfig};
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

/// What `vit classify` says besides the probabilities.
pub struct Told {
    /// The image's path through the ViT, in the JSON line.
    pub story: bool,
    /// End with one line of JSON.
    pub json: bool,
}

pub fn classify(
    weights: &Path,
    image: &Path,
    off: SwitchOff,
    told: Told,
    common: &Common,
) -> Result<(), CliError> {
    let (data_dir, device) = setup(common)?;
    let pixels = read_image(image)?;
    let file = read_weights(weights)?;
    let config = file.config.vit().cloned();
    let not_a_vit = || CliError::NotAVit {
        path: weights.to_path_buf(),
    };
    if told.story && config.is_none() {
        return Err(not_a_vit());
    }
    let input = images_tensor(&[pixels], &device); // [1, 1, 28, 28]
    let mut ablation = None;
    let model = file.into_model(&device);
    let logits = match (&model, &config) {
        (model, _) if off.heads.is_empty() => model.forward(input), // [1, C]
        (Classifier::Vit(model), Some(config)) => {
            // The heads are checked before any mean is taken (zero needs none).
            let heads_only = HeadsOff::new(off.heads.heads(), Replacement::Zero);
            Ablation::of(config, &heads_only, None, &device).map_err(CliError::HeadsOff)?;
            let means = match off.heads.replacement {
                Replacement::Zero => None,
                Replacement::Mean => {
                    let test = native::load_split(&data_dir, Split::Test)?;
                    let over: Vec<[u8; IMAGE_PIXELS]> = (0..off.mean_images.min(test.len()))
                        .filter_map(|i| test.image(i).try_into().ok())
                        .collect();
                    let future = head_means_async(model, config, &over, &device);
                    Some(futures::executor::block_on(future).map_err(CliError::Ablate)?)
                }
            };
            let switched = Ablation::of(config, &off.heads, means.as_ref(), &device)
                .map_err(CliError::HeadsOff)?;
            let logits = model.forward_ablated(input, &switched); // [1, C]
            ablation = Some(switched);
            logits
        }
        _ => return Err(not_a_vit()),
    };
    let story = match (&model, &config) {
        (Classifier::Vit(vit), Some(config)) if told.story => {
            let read = story::story(vit, &pixels, ablation.as_ref(), &device).read;
            let read: Vec<f32> = read.into_data().try_to_vec().unwrap_or_default();
            Story::of_read(&read, config).map(|story| story_json(&story, config))
        }
        _ => None,
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
    if let Some(story) = story.as_ref().filter(|_| !told.json) {
        println!(
            "the story: {} patches of {} pixels; the answer settles after block {}",
            story["patches"], story["patch_size"], story["settled_at"]
        );
    }
    if told.json {
        let mut line = serde_json::json!({
            "predicted": predicted,
            "probabilities": probabilities,
            "logits": logits,
            "off": off.heads.to_param(),
            "replacement": off.heads.replacement.param(),
        });
        if let Some(story) = story {
            line["story"] = story;
        }
        println!("{line}");
    }
    Ok(())
}

/// The story's numbers as the page's story shows them: the grid, each patch's token, the
/// logit lens, the rollout through each layer, and where the answer settles.
fn story_json(story: &Story, config: &VitConfig) -> serde_json::Value {
    let patches = config.grid_size() * config.grid_size();
    serde_json::json!({
        "patches": patches,
        "patch_size": config.patch_size,
        "grid": config.grid_size(),
        "tokens": (0..patches).map(|p| story.token(p).to_vec()).collect::<Vec<_>>(),
        "lens": story.lens,
        "rollout_by_layer": story.rollout_by_layer,
        "logits": story.logits,
        "settled_at": story.settled_at(),
    })
}
