//! Browser tests: `wasm-bindgen-test` in headless Chromium (see scripts/test.sh).
#![cfg(target_arch = "wasm32")]

use burn::tensor::{Tensor, TensorData};
use vitlab::data::{IMAGE_SIDE, normalize_pixel};
use vitlab::web::{Backend, start_device};
use vitlab::weights;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const PARITY_WEIGHTS: &[u8] = include_bytes!("fixtures/parity.safetensors");
const PARITY_JSON: &str = include_str!("fixtures/parity.json");

#[derive(serde::Deserialize)]
struct Fixture {
    images: Vec<Vec<u8>>,
    logits: Vec<Vec<f32>>,
}

/// Runs the parity fixture through the model on `backend` and returns the worst difference
/// from PyTorch's logits.
async fn parity_error(backend: Backend) -> f32 {
    let started = start_device(Some(backend)).await;
    assert_eq!(started.backend, backend, "{:?}", started.fallback_reason);
    let device = started.device;
    let fixture: Fixture = serde_json::from_str(PARITY_JSON).unwrap();
    let (model, _) = weights::load(PARITY_WEIGHTS, &device).unwrap();
    let batch = fixture.images.len();
    let pixels: Vec<f32> = fixture
        .images
        .iter()
        .flatten()
        .map(|&p| normalize_pixel(p))
        .collect();
    let images = Tensor::<4>::from_data(
        TensorData::new(pixels, [batch, 1, IMAGE_SIDE, IMAGE_SIDE]),
        &device,
    );
    let ours = model
        .forward(images)
        .into_data_async()
        .await
        .unwrap()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .unwrap();
    ours.iter()
        .zip(fixture.logits.iter().flatten())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max)
}

#[wasm_bindgen_test]
async fn cpu_backend_matches_pytorch() {
    let error = parity_error(Backend::Cpu).await;
    assert!(error < 1e-4, "largest logit difference {error}");
}

#[wasm_bindgen_test]
async fn webgpu_backend_matches_pytorch() {
    let error = parity_error(Backend::WebGpu).await;
    assert!(error < 1e-3, "largest logit difference {error}");
}

#[wasm_bindgen_test]
fn corrupt_weights_are_an_error_in_the_browser_too() {
    let truncated = &PARITY_WEIGHTS[..PARITY_WEIGHTS.len() / 2];
    assert!(weights::decode(truncated).is_err());
}
