//! The seed's PyTorch model and ours give the same logits for the same weights and images.
//! Fixture made by `tools/make_parity_fixture.py`.

use vitlab::data::images_tensor;

use vitlab::model::VitConfig;
use vitlab::weights;

use crate::{device, to_vec};

#[derive(serde::Deserialize)]
struct Fixture {
    images: Vec<Vec<u8>>,
    logits: Vec<Vec<f32>>,
}

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

#[test]
fn logits_match_pytorch_within_1e_4() {
    let fixture: Fixture =
        serde_json::from_str(&std::fs::read_to_string(format!("{FIXTURES}/parity.json")).unwrap())
            .unwrap();
    let bytes = std::fs::read(format!("{FIXTURES}/parity.safetensors")).unwrap();
    let device = device();
    let (model, config) = weights::load(&bytes, &device).unwrap();
    // The fixture carries no vitlab metadata: it must be read as the seed preset.
    assert_eq!(config, VitConfig::seed());

    let images = images_tensor(&fixture.images, &device);
    let ours = to_vec(model.forward(images));
    let theirs: Vec<f32> = fixture.logits.iter().flatten().copied().collect();
    assert_eq!(ours.len(), theirs.len());
    let worst = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(worst < 1e-4, "largest logit difference {worst}");
}
