//! Patch occlusion: the masks, the orders, and the curves of the shipped ViT beside the shipped
//! CNN on the first test images.

use vitlab::analysis::occlusion::{
    Comparison, FRACTIONS, OcclusionCurves, compare_async, hidden_count, kept_patches, occlude,
    occlusion_curves_async, random_order, relevance_order,
};
use vitlab::data::{IMAGE_PIXELS, Split};
use vitlab::model::Classifier;
use vitlab::{native, weights};

use crate::{device, run_now};

#[test]
fn hiding_a_patch_blanks_its_pixels_and_no_other() {
    let image = [200u8; IMAGE_PIXELS];
    let hidden = occlude(&image, 7, &[0, 48]);
    // Patch 0 is the top-left 4×4 block, patch 48 the bottom-right one.
    for y in 0..28 {
        for x in 0..28 {
            let blank = (y < 4 && x < 4) || (y >= 24 && x >= 24);
            assert_eq!(hidden[y * 28 + x] == 0, blank, "pixel ({y}, {x})");
        }
    }
    assert_eq!(occlude(&image, 4, &[]), image);
}

#[test]
fn orders_are_permutations_random_by_seed_and_relevant_highest_first() {
    let order = random_order(49, 7);
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..49).collect::<Vec<_>>());
    assert_eq!(order, random_order(49, 7), "the same seed, the same order");
    assert_ne!(order, random_order(49, 8));
    assert_eq!(relevance_order(&[0.1, 0.5, 0.5, 0.0]), vec![1, 2, 0, 3]);
    assert_eq!(hidden_count(0.3, 49), 15);
    assert_eq!(hidden_count(1.5, 16), 16);
    assert_eq!(kept_patches(6, &[4, 1, 9]), vec![0, 2, 3, 5]);
    assert_eq!(kept_patches(3, &[]), vec![0, 1, 2]);
}

#[test]
fn the_curves_start_at_each_model_s_accuracy_and_relevant_patches_matter_more_than_random_ones() {
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |name: &str| {
        weights::decode(&std::fs::read(format!("{root}/pretrained/{name}")).unwrap()).unwrap()
    };
    let (vit, cnn) = (read("vit-lab.safetensors"), read("cnn-teacher.safetensors"));
    let test = native::load_split(&native::default_data_dir(), Split::Test).unwrap();
    let images: Vec<[u8; IMAGE_PIXELS]> = (0..100)
        .map(|i| test.image(i).try_into().unwrap())
        .collect();
    let labels = test.labels[..100].to_vec();
    let curves: OcclusionCurves = run_now(occlusion_curves_async(
        &vit,
        &cnn,
        &images,
        &labels,
        &device(),
        1,
    ))
    .unwrap();
    assert_eq!(curves.fractions, FRACTIONS.to_vec());
    assert_eq!(curves.grid, 7);
    assert_eq!(
        curves.vit_random[0], curves.vit_relevant[0],
        "nothing hidden yet"
    );
    assert!(curves.vit_random[0] >= 0.95 && curves.cnn_random[0] >= 0.95);
    // A third of the patches: the ViT's most relevant cost far more than random ones, to the
    // CNN too (the same pixels are hidden from both).
    let third = 3;
    assert!(
        curves.vit_relevant[third] + 0.3 < curves.vit_random[third],
        "{curves:?}"
    );
    assert!(
        curves.cnn_relevant[third] + 0.2 < curves.cnn_random[third],
        "{curves:?}"
    );
    // Tokens dropped: nothing dropped is the ViT as it is; a third dropped at random costs
    // less than the most relevant third.
    assert_eq!(curves.vit_dropped_random[0], curves.vit_random[0]);
    assert!(
        curves.vit_dropped_relevant[third] < curves.vit_dropped_random[third],
        "{curves:?}"
    );
    assert_eq!(curves.vit_dropped_random.len(), FRACTIONS.len());
    let csv = curves.csv();
    assert_eq!(csv.lines().count(), FRACTIONS.len() + 1);
    assert!(csv.starts_with("fraction hidden,vit random,"));
}

#[test]
fn a_comparison_reads_the_blanked_image_with_both_models_and_drops_tokens_only_for_the_vit() {
    let root = env!("CARGO_MANIFEST_DIR");
    let read = |name: &str| {
        weights::decode(&std::fs::read(format!("{root}/pretrained/{name}")).unwrap()).unwrap()
    };
    let device = device();
    let Classifier::Vit(vit) = read("vit-lab.safetensors").into_model(&device) else {
        panic!("the shipped ViT is a ViT");
    };
    let cnn = read("cnn-teacher.safetensors").into_model(&device);
    let test = native::load_split(&native::default_data_dir(), Split::Test).unwrap();
    let image: [u8; IMAGE_PIXELS] = test.image(0).try_into().unwrap();
    let label = usize::from(test.labels[0]);
    let top = |p: &[f32]| (0..p.len()).max_by(|&a, &b| p[a].total_cmp(&p[b])).unwrap();
    let whole: Comparison = run_now(compare_async(&vit, &cnn, &image, &[], &device)).unwrap();
    for probabilities in [&whole.vit, &whole.cnn, &whole.vit_dropped] {
        assert_eq!(probabilities.len(), 10);
        assert!((probabilities.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        assert_eq!(top(probabilities), label, "{whole:?}");
    }
    // Nothing hidden: dropping no token is the ViT as it is.
    for (a, b) in whole.vit.iter().zip(&whole.vit_dropped) {
        assert!((a - b).abs() < 1e-5, "{whole:?}");
    }
    assert!(
        whole
            .summary(0)
            .starts_with(&format!("0 hidden · ViT reads {label} ("))
    );
    // Every patch but the centre hidden: both models read the blanked image, as they read
    // it given blanked; the ViT with those tokens dropped reads the centre's token alone.
    let all_but_centre: Vec<usize> = (0..49).filter(|&p| p != 24).collect();
    let hidden = run_now(compare_async(&vit, &cnn, &image, &all_but_centre, &device)).unwrap();
    let blanked = occlude(&image, 7, &all_but_centre);
    let given = run_now(compare_async(&vit, &cnn, &blanked, &[], &device)).unwrap();
    assert_eq!(hidden.vit, given.vit);
    assert_eq!(hidden.cnn, given.cnn);
    assert_ne!(hidden.vit_dropped, hidden.vit);
    assert!(hidden.summary(48).starts_with("48 hidden · ViT reads "));
}

#[test]
fn a_comparison_s_summary_names_each_model_s_top_class_and_its_probability() {
    let one_hot = |class: usize, p: f32| -> Vec<f32> {
        (0..10)
            .map(|c| if c == class { p } else { (1.0 - p) / 9.0 })
            .collect()
    };
    let comparison = Comparison {
        vit: one_hot(7, 0.98),
        vit_dropped: one_hot(1, 0.5),
        cnn: one_hot(3, 0.704),
    };
    assert_eq!(
        comparison.summary(3),
        "3 hidden · ViT reads 7 (98%) · CNN reads 3 (70%) · ViT with their tokens dropped reads 1 (50%)"
    );
    let empty = Comparison {
        vit: Vec::new(),
        vit_dropped: Vec::new(),
        cnn: Vec::new(),
    };
    assert_eq!(
        empty.summary(0),
        "0 hidden · ViT reads – · CNN reads – · ViT with their tokens dropped reads –"
    );
}
