//! Patch occlusion: the masks, the orders, and the curves of the shipped ViT beside the shipped
//! CNN on the first test images.

use vitlab::analysis::occlusion::{
    FRACTIONS, OcclusionCurves, hidden_count, kept_patches, occlude, occlusion_curves_async,
    random_order, relevance_order,
};
use vitlab::data::{IMAGE_PIXELS, Split};
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
