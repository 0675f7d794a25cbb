//! The reference PyTorch models and ours give the same logits for the same weights and
//! images: the seed's ViT, the CNN of `tools/seed_cnn.py`, and the shipped lab model (patch
//! 4, the page's default). Fixtures made by `tools/make_parity_fixture.py [--model cnn]`
//! and `… --weights pretrained/vit-lab.safetensors`.

use vitlab::data::{images_tensor, sha256_hex};

use vitlab::model::{CnnConfig, ModelConfig, VitConfig};
use vitlab::weights;

use crate::{device, to_vec};

#[derive(serde::Deserialize)]
struct Fixture {
    images: Vec<Vec<u8>>,
    logits: Vec<Vec<f32>>,
    /// For a shipped file's fixture: the file the logits were computed with.
    weights_sha256: Option<String>,
}

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn fixture(stem: &str) -> Fixture {
    serde_json::from_str(&std::fs::read_to_string(format!("{FIXTURES}/{stem}.json")).unwrap())
        .unwrap()
}

/// The largest difference between our logits and PyTorch's for fixture `stem`, whose
/// weights must be read (they carry no vitlab metadata) as `expected`.
fn worst_difference(stem: &str, expected: ModelConfig) -> f32 {
    let bytes = std::fs::read(format!("{FIXTURES}/{stem}.safetensors")).unwrap();
    let (worst, config) = worst_difference_with(&fixture(stem), &bytes);
    assert_eq!(config, expected);
    worst
}

/// The largest difference between our logits with the weights file `bytes` and the
/// fixture's, and the config the file names.
fn worst_difference_with(fixture: &Fixture, bytes: &[u8]) -> (f32, ModelConfig) {
    let device = device();
    let (model, config) = weights::load(bytes, &device).unwrap();

    let images = images_tensor(&fixture.images, &device);
    let ours = to_vec(model.forward(images));
    let theirs: Vec<f32> = fixture.logits.iter().flatten().copied().collect();
    assert_eq!(ours.len(), theirs.len());
    assert!(theirs.iter().any(|&logit| logit.abs() > 1e-2), "{theirs:?}");
    let worst = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    (worst, config)
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

#[test]
fn the_shipped_lab_model_s_logits_match_pytorch_within_1e_4() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/pretrained/vit-lab.safetensors"
    );
    let bytes = std::fs::read(path).unwrap();
    let fixture = fixture("parity-lab");
    // A retrained file would fail below as if the model were wrong.
    assert_eq!(
        fixture.weights_sha256.as_deref(),
        Some(sha256_hex(&bytes).as_str()),
        "{path} changed: remake tests/fixtures/parity-lab.json with \
         tools/make_parity_fixture.py --weights pretrained/vit-lab.safetensors"
    );
    let (worst, config) = worst_difference_with(&fixture, &bytes);
    assert_eq!(
        config.vit().map(|vit| vit.patch_size),
        Some(4),
        "{config:?}"
    );
    println!("the lab model's largest logit difference from PyTorch's: {worst:e}");
    assert!(worst < 1e-4, "largest logit difference {worst}");
}
