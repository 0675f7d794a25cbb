//! The reference PyTorch models and ours give the same logits for the same weights and
//! images: the seed's ViT, and the CNN of `tools/seed_cnn.py`. Fixtures made by
//! `tools/make_parity_fixture.py [--model cnn]`.

use vitlab::data::images_tensor;

use vitlab::model::{CnnConfig, ModelConfig, VitConfig};
use vitlab::weights;

use crate::{device, to_vec};

#[derive(serde::Deserialize)]
struct Fixture {
    images: Vec<Vec<u8>>,
    logits: Vec<Vec<f32>>,
}

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// The largest difference between our logits and PyTorch's for fixture `stem`, which must
/// be read (it carries no vitlab metadata) as `expected`.
fn worst_difference(stem: &str, expected: ModelConfig) -> f32 {
    let fixture: Fixture =
        serde_json::from_str(&std::fs::read_to_string(format!("{FIXTURES}/{stem}.json")).unwrap())
            .unwrap();
    let bytes = std::fs::read(format!("{FIXTURES}/{stem}.safetensors")).unwrap();
    let device = device();
    let (model, config) = weights::load(&bytes, &device).unwrap();
    assert_eq!(config, expected);

    let images = images_tensor(&fixture.images, &device);
    let ours = to_vec(model.forward(images));
    let theirs: Vec<f32> = fixture.logits.iter().flatten().copied().collect();
    assert_eq!(ours.len(), theirs.len());
    assert!(theirs.iter().any(|&logit| logit.abs() > 1e-2), "{theirs:?}");
    ours.iter()
        .zip(&theirs)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max)
}

#[test]
fn logits_match_pytorch_within_1e_4() {
    let worst = worst_difference("parity", VitConfig::seed().into());
    assert!(worst < 1e-4, "largest logit difference {worst}");
}

#[test]
fn the_cnn_s_logits_match_pytorch_within_1e_4() {
    let worst = worst_difference("parity-cnn", CnnConfig::seed().into());
    assert!(worst < 1e-4, "largest logit difference {worst}");
}
