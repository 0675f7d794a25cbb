//! Gradient relevance (Chefer et al.) and the logit lens of the shipped seed-recipe model
//! against the same computations in PyTorch on the seed's own code, with autograd for the
//! gradients (`tools/make_relevance_fixture.py`, `tests/fixtures/relevance-seed.json`).

use vitlab::analysis::explanation::{Explanation, probabilities};
use vitlab::analysis::insight::{LayerAttention, gradient_relevance};
use vitlab::analysis::relevance::{explain_async, explaining_model, relevance_async};
use vitlab::data::{images_tensor, sha256_hex};
use vitlab::weights;

use crate::{device, run_now, to_vec};

#[derive(serde::Deserialize)]
struct Fixture {
    weights: String,
    weights_sha256: String,
    cases: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    image: Vec<u8>,
    predicted: usize,
    relevance: std::collections::BTreeMap<usize, Vec<f32>>,
    logit_lens: Vec<Vec<f32>>,
    /// Patches left as tokens, and the logits PyTorch gives with only those.
    kept: Vec<usize>,
    kept_logits: Vec<f32>,
}

fn fixture() -> (Fixture, Vec<u8>) {
    let root = env!("CARGO_MANIFEST_DIR");
    let fixture: Fixture = serde_json::from_str(
        &std::fs::read_to_string(format!("{root}/tests/fixtures/relevance-seed.json")).unwrap(),
    )
    .unwrap();
    let bytes = std::fs::read(format!("{root}/{}", fixture.weights)).unwrap();
    assert_eq!(
        sha256_hex(&bytes),
        fixture.weights_sha256,
        "{} changed: remake the fixture with tools/make_relevance_fixture.py",
        fixture.weights
    );
    (fixture, bytes)
}

/// The largest difference between two lists of numbers.
fn largest_difference(ours: &[f32], theirs: &[f32]) -> f32 {
    ours.iter()
        .zip(theirs)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max)
}

/// The largest difference, relative to the largest value PyTorch gives.
fn relative_difference(ours: &[f32], theirs: &[f32]) -> f32 {
    assert_eq!(ours.len(), theirs.len());
    let scale = theirs.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!(
        scale > 1e-6,
        "an all-zero reference proves nothing: {theirs:?}"
    );
    largest_difference(ours, theirs) / scale
}

#[test]
fn gradient_relevance_matches_pytorch_for_the_predicted_class_and_another() {
    let (fixture, bytes) = fixture();
    let file = weights::decode(&bytes).unwrap();
    let config = file.config.vit().unwrap().clone();
    let model = explaining_model(&file, &device()).unwrap();
    let mut worst = 0.0f32;
    for case in &fixture.cases {
        for (&class, theirs) in &case.relevance {
            let image = images_tensor(std::slice::from_ref(&case.image), &device().autodiff());
            let asked = (class != case.predicted).then_some(class);
            let ours = run_now(relevance_async(&model, &config, image, asked)).unwrap();
            assert_eq!(ours.class, class, "the class explained");
            worst = worst.max(relative_difference(&ours.patches, theirs));
        }
    }
    println!("relevance against PyTorch: largest difference {worst:.2e} of the largest value");
    assert!(
        worst < 1e-3,
        "largest relevance difference {worst} of the largest value"
    );
}

#[test]
fn the_logit_lens_matches_pytorch_and_ends_at_the_model_s_logits() {
    let (fixture, bytes) = fixture();
    let (model, _) = weights::load(&bytes, &device()).unwrap();
    let vit = model.into_vit().unwrap();
    for case in &fixture.cases {
        let image = || images_tensor(std::slice::from_ref(&case.image), &device());
        let lens: Vec<Vec<f32>> = vit.logit_lens(image()).into_iter().map(to_vec).collect();
        assert_eq!(lens.len(), case.logit_lens.len());
        for (ours, theirs) in lens.iter().zip(&case.logit_lens) {
            let worst = largest_difference(ours, theirs);
            assert!(worst < 1e-4, "logit lens differs by {worst}");
        }
        assert_eq!(lens.last(), Some(&to_vec(vit.forward(image()))));
    }
}

#[test]
fn an_explanation_reads_relevance_and_lens_from_one_pass_as_pytorch_does() {
    // What the page's worker computes: relevance and lens from the same forward pass.
    let (fixture, bytes) = fixture();
    let file = weights::decode(&bytes).unwrap();
    let config = file.config.vit().unwrap().clone();
    let model = explaining_model(&file, &device()).unwrap();
    for case in &fixture.cases {
        let image = images_tensor(std::slice::from_ref(&case.image), &device().autodiff());
        let explanation = run_now(explain_async(&model, &config, image, None)).unwrap();
        assert_eq!(explanation.class, case.predicted);
        let worst = relative_difference(&explanation.relevance, &case.relevance[&case.predicted]);
        assert!(worst < 1e-3, "relevance differs by {worst} of the largest");
        assert_eq!(explanation.lens.len(), case.logit_lens.len());
        for (ours, logits) in explanation.lens.iter().zip(&case.logit_lens) {
            let theirs = probabilities(logits);
            let worst = largest_difference(ours, &theirs);
            assert!(worst < 1e-5, "lens probabilities differ by {worst}");
        }
    }
}

#[test]
fn dropping_patch_tokens_matches_pytorch_and_dropping_none_is_the_forward_pass() {
    let (fixture, bytes) = fixture();
    let grid = weights::decode(&bytes)
        .unwrap()
        .config
        .vit()
        .unwrap()
        .grid_size();
    let patches = grid * grid;
    let (model, _) = weights::load(&bytes, &device()).unwrap();
    let vit = model.into_vit().unwrap();
    for case in &fixture.cases {
        let image = || images_tensor(std::slice::from_ref(&case.image), &device());
        let dropped = to_vec(vit.forward_kept(image(), std::slice::from_ref(&case.kept)));
        let worst = relative_difference(&dropped, &case.kept_logits);
        assert!(
            worst < 1e-4,
            "logits with patches dropped differ by {worst}"
        );
        let full = to_vec(vit.forward(image()));
        assert!(
            relative_difference(&dropped, &full) > 1e-3,
            "dropping a third of the patches changes the logits"
        );
        let every: Vec<usize> = (0..patches).collect();
        let kept_all = to_vec(vit.forward_kept(image(), &[every]));
        // Every patch dropped: the class token alone still gives an answer.
        let none = to_vec(vit.forward_kept(image(), &[Vec::new()]));
        assert!(none.len() == full.len() && none.iter().all(|v| v.is_finite()));
        assert!(relative_difference(&kept_all, &full) < 1e-5);
    }
}

#[test]
fn relevance_follows_the_positive_gradient_weighted_attention() {
    // Two tokens, one head, one layer: R = I + (∇A ⊙ A)⁺ · I; the class row's patch entry is
    // the positive product at (0, 1), and a negative product counts nothing.
    let layer = |values: Vec<f32>| LayerAttention {
        heads: 1,
        tokens: 2,
        values,
    };
    let attention = layer(vec![0.25, 0.75, 0.5, 0.5]);
    assert_eq!(
        gradient_relevance(
            std::slice::from_ref(&attention),
            &[layer(vec![1.0, 2.0, 0.0, 0.0])]
        ),
        vec![1.5]
    );
    assert_eq!(
        gradient_relevance(&[attention], &[layer(vec![1.0, -2.0, 0.0, 0.0])]),
        vec![0.0]
    );
}

#[test]
fn an_explanation_reads_its_lens_and_writes_the_lens_as_csv() {
    let explanation = Explanation {
        class: 4,
        relevance: vec![0.5, 0.0, 0.25, 1.0],
        lens: vec![vec![0.7, 0.3], vec![0.2, 0.8]],
    };
    assert_eq!(explanation.lens_tops(), vec![(0, 0.7), (1, 0.8)]);
    assert_eq!(
        explanation.lens_csv(),
        "block,p0,p1\n1,0.7,0.3\n2,0.2,0.8\n"
    );
    let p = probabilities(&[2f32.ln(), 2f32.ln(), 0.0]);
    assert!(
        (p[0] - 0.4).abs() < 1e-6 && (p[2] - 0.2).abs() < 1e-6,
        "{p:?}"
    );
}
