//! Heads switched off: the model's ablated forward against the same model with those heads'
//! columns of the output projection zeroed, mean ablation against the heads' own outputs, the
//! refusals, and which heads of the shipped ViT matter.

use vitlab::analysis::ablation::{head_importance_async, head_means_async};
use vitlab::data::{IMAGE_PIXELS, Split, images_tensor};
use vitlab::model::{Ablation, AblationError, Classifier, Replacement, VitConfig};
use vitlab::{native, weights};

use crate::{device, run_now, to_vec};

fn shipped_vit() -> (weights::WeightsFile, VitConfig) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/pretrained/vit-lab.safetensors"
    );
    let file = weights::decode(&std::fs::read(path).unwrap()).unwrap();
    let config = file.config.vit().cloned().unwrap();
    (file, config)
}

fn test_digits(count: usize) -> (Vec<[u8; IMAGE_PIXELS]>, Vec<u8>) {
    let test = native::load_split(&native::default_data_dir(), Split::Test).unwrap();
    let images = (0..count)
        .map(|i| test.image(i).try_into().unwrap())
        .collect();
    (images, test.labels[..count].to_vec())
}

fn largest_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn zeroing_a_head_is_zeroing_its_columns_of_the_output_projection() {
    let (file, config) = shipped_vit();
    let device = device();
    let (images, _) = test_digits(4);
    let input = images_tensor(&images, &device);
    let Classifier::Vit(model) = file.clone().into_model(&device) else {
        panic!("a ViT")
    };
    let off = [(1, 2), (4, 0), (4, 7)];
    let ablation = Ablation::new(&config, &off, Replacement::Zero, None, &device).unwrap();
    let ablated = to_vec(model.forward_ablated(input.clone(), &ablation));

    // The same heads switched off in the weights: their input columns of `proj` zeroed
    // (PyTorch's layout, `[out, in]`).
    let head_dim = config.dim / config.heads;
    let mut edited = file.clone();
    for &(layer, head) in &off {
        let name = format!("layers.{layer}.attn.proj.weight");
        let proj = edited.tensors.iter_mut().find(|t| t.name == name).unwrap();
        for row in proj.values.chunks_mut(config.dim) {
            row[head * head_dim..(head + 1) * head_dim].fill(0.0);
        }
    }
    let Classifier::Vit(reference) = edited.into_model(&device) else {
        panic!("a ViT")
    };
    let expected = to_vec(reference.forward(input.clone()));
    assert!(
        largest_difference(&ablated, &expected) < 1e-4,
        "{ablated:?} {expected:?}"
    );
    // And it is not the model as it is.
    let whole = to_vec(model.forward(input.clone()));
    assert!(largest_difference(&ablated, &whole) > 1e-3);
    // Nothing switched off: the model as it is, exactly.
    let none = to_vec(model.forward_ablated(input, &Ablation::default()));
    assert_eq!(none, whole);
}

#[test]
fn a_head_replaced_by_its_mean_over_one_image_reads_that_image_as_before() {
    let (file, config) = shipped_vit();
    let device = device();
    let (images, _) = test_digits(2);
    let Classifier::Vit(model) = file.into_model(&device) else {
        panic!("a ViT")
    };
    let one = &images[..1];
    let means = run_now(head_means_async(&model, &config, one, &device)).unwrap();
    assert_eq!((means.images, means.tokens, means.dim), (1, 50, config.dim));
    assert_eq!(means.layers.len(), config.depth);
    let every: Vec<(usize, usize)> = (0..config.depth)
        .flat_map(|l| (0..config.heads).map(move |h| (l, h)))
        .collect();
    let ablation =
        Ablation::new(&config, &every, Replacement::Mean, Some(&means), &device).unwrap();
    // Every head given its own output on this image: nothing changes for it...
    let input = images_tensor(one, &device);
    let ablated = to_vec(model.forward_ablated(input.clone(), &ablation));
    let whole = to_vec(model.forward(input));
    assert!(
        largest_difference(&ablated, &whole) < 1e-4,
        "{ablated:?} {whole:?}"
    );
    // ...while another image, given the first one's head outputs, reads otherwise.
    let other = images_tensor(&images[1..], &device);
    let other_ablated = to_vec(model.forward_ablated(other.clone(), &ablation));
    assert!(largest_difference(&other_ablated, &to_vec(model.forward(other))) > 1e-2);
}

#[test]
fn heads_that_are_not_there_and_means_of_another_model_are_refused() {
    let (file, config) = shipped_vit();
    let device = device();
    let refused = Ablation::new(&config, &[(0, 0), (6, 0)], Replacement::Zero, None, &device);
    assert_eq!(
        refused.unwrap_err(),
        AblationError::NoSuchHead {
            layer: 6,
            head: 0,
            depth: 6,
            heads: config.heads
        }
    );
    let refused = Ablation::new(
        &config,
        &[(0, config.heads)],
        Replacement::Zero,
        None,
        &device,
    );
    assert!(matches!(refused, Err(AblationError::NoSuchHead { .. })));
    let refused = Ablation::new(&config, &[(0, 0)], Replacement::Mean, None, &device);
    assert!(matches!(
        refused,
        Err(AblationError::MeansOfAnotherModel { .. })
    ));
    let Classifier::Vit(model) = file.into_model(&device) else {
        panic!("a ViT")
    };
    let (images, _) = test_digits(1);
    let mut means = run_now(head_means_async(&model, &config, &images, &device)).unwrap();
    means.layers[3].pop();
    let refused = Ablation::new(&config, &[(0, 0)], Replacement::Mean, Some(&means), &device);
    assert!(matches!(
        refused,
        Err(AblationError::MeansOfAnotherModel { .. })
    ));
}

#[test]
fn the_table_of_heads_holds_every_head_and_the_accuracy_each_one_s_absence_leaves() {
    let (file, config) = shipped_vit();
    let device = device();
    let (images, labels) = test_digits(100);
    let Classifier::Vit(model) = file.into_model(&device) else {
        panic!("a ViT")
    };
    let means = run_now(head_means_async(&model, &config, &images, &device)).unwrap();
    for (replacement, means) in [(Replacement::Mean, Some(&means)), (Replacement::Zero, None)] {
        let table = run_now(head_importance_async(
            &model,
            &config,
            (&images, &labels),
            replacement,
            means,
            &device,
        ))
        .unwrap();
        assert_eq!(table.images, 100);
        assert!(table.baseline >= 0.95, "{table:?}");
        assert_eq!(table.accuracy.len(), config.depth);
        assert!(
            table
                .accuracy
                .iter()
                .all(|heads| heads.len() == config.heads)
        );
        assert!(
            table
                .accuracy
                .iter()
                .flatten()
                .all(|a| (0.0..=1.0).contains(a) && (a * 100.0 - (a * 100.0).round()).abs() < 1e-3),
            "accuracies of 100 images: {table:?}"
        );
        let csv = table.csv();
        assert_eq!(csv.lines().count(), 1 + config.depth * config.heads);
        assert!(csv.starts_with("layer,head,accuracy,lost\n1,1,"));
        println!("{replacement:?}: {:?}", table.lost());
    }
}

#[derive(serde::Deserialize)]
struct Fixture {
    weights: String,
    weights_sha256: String,
    images: Vec<Vec<u8>>,
    logits: Vec<Vec<f32>>,
    cases: Vec<FixtureCase>,
}

#[derive(serde::Deserialize)]
struct FixtureCase {
    /// `(layer, head)` pairs switched off together.
    heads: Vec<(usize, usize)>,
    /// The logits PyTorch gives with those heads zeroed, and replaced by their means over
    /// the fixture's images.
    zero: Vec<Vec<f32>>,
    mean: Vec<Vec<f32>>,
}

/// The seed's PyTorch model with heads switched off through a hook on `attn.proj`
/// (`tools/make_ablation_fixture.py`), both ways, against ours: logits within 1e-4.
#[test]
fn heads_switched_off_as_pytorch_switches_them_off() {
    let root = env!("CARGO_MANIFEST_DIR");
    let fixture: Fixture = serde_json::from_str(
        &std::fs::read_to_string(format!("{root}/tests/fixtures/ablation-lab.json")).unwrap(),
    )
    .unwrap();
    let bytes = std::fs::read(format!("{root}/{}", fixture.weights)).unwrap();
    assert_eq!(
        vitlab::data::sha256_hex(&bytes),
        fixture.weights_sha256,
        "{} changed: remake tests/fixtures/ablation-lab.json with tools/make_ablation_fixture.py",
        fixture.weights
    );
    let file = weights::decode(&bytes).unwrap();
    let config = file.config.vit().cloned().unwrap();
    let device = device();
    let Classifier::Vit(model) = file.into_model(&device) else {
        panic!("a ViT")
    };
    let images: Vec<[u8; IMAGE_PIXELS]> = fixture
        .images
        .iter()
        .map(|image| image.as_slice().try_into().unwrap())
        .collect();
    let input = images_tensor(&images, &device);
    let flat = |rows: &[Vec<f32>]| rows.concat();
    let whole = to_vec(model.forward(input.clone()));
    assert!(largest_difference(&whole, &flat(&fixture.logits)) < 1e-4);
    let means = run_now(head_means_async(&model, &config, &images, &device)).unwrap();
    let mut worst = 0f32;
    for case in &fixture.cases {
        for (replacement, expected) in [
            (Replacement::Zero, &case.zero),
            (Replacement::Mean, &case.mean),
        ] {
            let ablation =
                Ablation::new(&config, &case.heads, replacement, Some(&means), &device).unwrap();
            let ours = to_vec(model.forward_ablated(input.clone(), &ablation));
            let difference = largest_difference(&ours, &flat(expected));
            assert!(
                difference < 1e-4,
                "{:?} {replacement:?}: {difference}",
                case.heads
            );
            // Switching heads off changes what the model says.
            assert!(largest_difference(&ours, &whole) > 1e-3, "{:?}", case.heads);
            worst = worst.max(difference);
        }
    }
    println!("heads switched off, ours against PyTorch: largest logit difference {worst:e}");
}
