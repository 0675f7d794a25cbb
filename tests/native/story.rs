//! "How the ViT reads your digit" (`analysis::story`): each value the story shows is the
//! model's own, held to what the weights and the classification give independently, and the
//! packed form reads back as written and refuses the wrong length.

use vitlab::analysis::inference::{Classification, classify, images_of};
use vitlab::analysis::story::{self, Story, patch_pixels};
use vitlab::data::{IMAGE_PIXELS, normalize_pixel};
use vitlab::model::{Classifier, HeadsOff, Replacement, VitConfig};
use vitlab::weights::WeightsFile;
use vitlab::{native, weights};

use crate::{device, to_vec};

/// The shipped lab model's weights, and a real test digit.
fn lab_and_digit(path: &str) -> (WeightsFile, [u8; IMAGE_PIXELS]) {
    let bytes = std::fs::read(path).unwrap();
    let file = weights::decode(&bytes).unwrap();
    let dir = native::default_data_dir();
    let manifest = native::read_manifest(&dir).unwrap();
    let test = native::load_chunk(&dir, &manifest.test[0]).unwrap();
    (file, images_of(&test, 4)[3])
}

fn tensor<'a>(file: &'a WeightsFile, name: &str) -> &'a [f32] {
    &file.tensors.iter().find(|t| t.name == name).unwrap().values
}

fn told(file: &WeightsFile, image: &[u8; IMAGE_PIXELS]) -> (VitConfig, Story) {
    let device = device();
    let config = file.config.vit().unwrap().clone();
    let Classifier::Vit(model) = file.into_model(&device) else {
        panic!("a ViT")
    };
    let read = to_vec(story::story(&model, image, None, &device).read);
    assert_eq!(read.len(), story::read_len(&config));
    (config.clone(), Story::of_read(&read, &config).unwrap())
}

#[test]
fn a_patch_token_is_e_times_its_pixels_plus_b_and_its_position_is_added_after() {
    for path in [
        "pretrained/vit-lab.safetensors",
        "pretrained/vit-seed.safetensors",
    ] {
        let (file, image) = lab_and_digit(path);
        let (config, story) = told(&file, &image);
        let (p, dim) = (config.patch_size, config.dim);
        let patches = config.grid_size() * config.grid_size();
        assert_eq!(story.projected.len(), patches * dim, "{path}");
        let e = tensor(&file, "patch_embed.proj.weight"); // [D, P²] as torch keeps it
        let b = tensor(&file, "patch_embed.proj.bias");
        let positions = tensor(&file, "patch_embed.pos_embedding"); // [1, N + 1, D]
        let class = tensor(&file, "patch_embed.cls_token"); // [1, 1, D]
        let mut largest = 0f32;
        for patch in [0, patches / 2, patches - 1] {
            let pixels: Vec<f32> = patch_pixels(&image, patch, p)
                .into_iter()
                .map(normalize_pixel)
                .collect();
            assert_eq!(pixels.len(), p * p);
            let token = story.token(patch);
            let entering = story.entering(patch + 1);
            for d in 0..dim {
                let expected: f32 = b[d]
                    + (0..p * p)
                        .map(|k| e[d * p * p + k] * pixels[k])
                        .sum::<f32>();
                largest = largest.max((token[d] - expected).abs());
                let placed = token[d] + positions[(patch + 1) * dim + d];
                largest = largest.max((entering[d] - placed).abs());
            }
        }
        for d in 0..dim {
            largest = largest.max((story.entering(0)[d] - (class[d] + positions[d])).abs());
        }
        assert!(largest < 1e-4, "{path}: off by {largest}");
        assert!(story.token(patches).is_empty());
    }
}

#[test]
fn the_lens_ends_at_the_prediction_and_the_rollout_builds_up_to_the_readings() {
    let (file, image) = lab_and_digit("pretrained/vit-lab.safetensors");
    let (config, story) = told(&file, &image);
    let device = device();
    let model = file.into_model(&device);
    let packed = to_vec(classify(&model, &[image], None, &device).packed);
    let classification = Classification::from_packed(&packed, &config.clone().into());
    assert_eq!(story.lens.len(), config.depth);
    assert_eq!(story.rollout_by_layer.len(), config.depth);
    let last = story.lens.last().unwrap();
    for (lens, p) in last.iter().zip(&classification.probabilities) {
        assert!(
            (lens - p).abs() < 1e-5,
            "{last:?} against {:?}",
            classification.probabilities
        );
    }
    for row in &story.lens {
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    }
    let through_all = story.rollout_by_layer.last().unwrap();
    for (a, b) in through_all.iter().zip(classification.rollout()) {
        assert!((a - b).abs() < 1e-5);
    }
    // Each layer's rollout is its own: the first is not the last.
    assert_ne!(story.rollout_by_layer[0], *through_all);
    // The digit is read right by the end, and the lens says where the answer settled.
    assert_eq!(
        vitlab::analysis::inference::most_probable(last),
        classification.predicted()
    );
    let settled = story.settled_at().unwrap();
    assert!((1..=config.depth).contains(&settled));
}

#[test]
fn heads_switched_off_change_the_story_as_they_change_the_reading() {
    let (file, image) = lab_and_digit("pretrained/vit-lab.safetensors");
    let config = file.config.vit().unwrap().clone();
    let device = device();
    let Classifier::Vit(model) = file.into_model(&device) else {
        panic!("a ViT")
    };
    let off = HeadsOff::new(vec![(0, 0), (0, 1), (0, 2), (0, 3)], Replacement::Zero);
    let ablation = vitlab::model::Ablation::of(&config, &off, None, &device).unwrap();
    let on = Story::of_read(
        &to_vec(story::story(&model, &image, None, &device).read),
        &config,
    )
    .unwrap();
    let without = Story::of_read(
        &to_vec(story::story(&model, &image, Some(&ablation), &device).read),
        &config,
    )
    .unwrap();
    // The tokens are made before any head: the same; what the heads read is not.
    assert_eq!(on.projected, without.projected);
    assert_ne!(on.lens, without.lens);
    let logits =
        to_vec(model.forward_ablated(vitlab::data::images_tensor(&[image], &device), &ablation));
    for (a, b) in without.logits.iter().zip(&logits) {
        assert!((a - b).abs() < 1e-5);
    }
}

#[test]
fn the_packed_story_reads_back_as_written_and_refuses_the_wrong_length() {
    let (file, image) = lab_and_digit("pretrained/vit-seed.safetensors");
    let (config, story) = told(&file, &image);
    let packed = story.to_packed();
    assert_eq!(packed.len(), Story::packed_len(&config));
    assert_eq!(Story::from_packed(&packed, &config), Some(story.clone()));
    assert_eq!(Story::from_packed(&packed[1..], &config), None);
    let mut longer = packed.clone();
    longer.push(0.0);
    assert_eq!(Story::from_packed(&longer, &config), None);
    assert_eq!(Story::of_read(&packed, &config), None);
    // A config too large to run saturates instead of wrapping.
    let huge = VitConfig {
        dim: usize::MAX / 2,
        ..config.clone()
    };
    assert_eq!(Story::packed_len(&huge), usize::MAX);
    assert_eq!(story::read_len(&huge), usize::MAX);
}

#[test]
fn a_patch_s_pixels_are_its_square_of_the_image() {
    let image: Vec<u8> = (0..IMAGE_PIXELS).map(|i| (i % 251) as u8).collect();
    // Patch (1, 2) of a 7×7 grid of 4-pixel patches: rows 4..8, columns 8..12.
    let pixels = patch_pixels(&image, 7 + 2, 4);
    let expected: Vec<u8> = (4..8)
        .flat_map(|y| (8..12).map(move |x| ((y * 28 + x) % 251) as u8))
        .collect();
    assert_eq!(pixels, expected);
    assert_eq!(story::most_attended(&[0.1, 0.5, 0.5, 0.2]), 1);
}
