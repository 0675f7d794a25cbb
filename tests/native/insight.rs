use vitlab::analysis::insight::{
    LayerAttention, filter_components, mean_attention_distance, position_similarity, rollout,
};

/// A layer whose every head attends uniformly.
fn uniform(heads: usize, tokens: usize) -> LayerAttention {
    LayerAttention {
        heads,
        tokens,
        values: vec![1.0 / tokens as f32; heads * tokens * tokens],
    }
}

/// A layer whose every token attends only to itself.
fn diagonal(heads: usize, tokens: usize) -> LayerAttention {
    let mut values = vec![0.0; heads * tokens * tokens];
    for h in 0..heads {
        for t in 0..tokens {
            values[(h * tokens + t) * tokens + t] = 1.0;
        }
    }
    LayerAttention {
        heads,
        tokens,
        values,
    }
}

#[test]
fn rollout_of_self_attention_stays_on_the_class_token() {
    let layers = vec![diagonal(2, 5), diagonal(2, 5)];
    assert_eq!(rollout(&layers), vec![0.0; 4]);
}

#[test]
fn rollout_of_one_uniform_layer_is_half_identity_half_uniform() {
    // (I + U) / 2 for the class row: 1/2 on itself, 1/(2·5) on each patch.
    let out = rollout(&[uniform(3, 5)]);
    assert_eq!(out.len(), 4);
    assert!(out.iter().all(|v| (v - 0.1).abs() < 1e-6), "{out:?}");
    // Two layers: ((I + U) / 2)² = (I + 3U) / 4, as U² = U: 3/(4·5) on each patch.
    let two = rollout(&[uniform(3, 5), uniform(3, 5)]);
    assert!(two.iter().all(|v| (v - 0.15).abs() < 1e-6), "{two:?}");
}

/// One head over 3 tokens, from its rows.
fn layer(rows: [[f32; 3]; 3]) -> LayerAttention {
    LayerAttention {
        heads: 1,
        tokens: 3,
        values: rows.concat(),
    }
}

#[test]
fn rollout_multiplies_later_layers_on_the_left() {
    // Layer 1: the class token looks at patch 1. Layer 2: patch 1 looks at patch 2, and
    // the class token at itself. With the residual, A1 = (L1 + I) / 2, A2 = (L2 + I) / 2.
    let first = layer([[0.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
    let second = layer([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]);
    // The class row of A2·A1 is the class row of A1, [1/2, 1/2, 0]: layer 2's class token
    // read only itself, which read patch 1 in layer 1. (A1·A2 would give [1/2, 1/4, 1/4].)
    assert_eq!(rollout(&[first.clone(), second.clone()]), [0.5, 0.0]);
    // The other order: the class token reads patch 1 last, which had read patch 2.
    assert_eq!(rollout(&[second, first]), [0.25, 0.25]);
}

#[test]
fn class_attention_and_head_mean() {
    let mut layer = diagonal(2, 3);
    // Head 1's class token looks only at patch 1 (token 2).
    layer.values[(3 * 3)..(3 * 3 + 3)].copy_from_slice(&[0.0, 0.0, 1.0]);
    assert_eq!(layer.class_attention(0), [0.0, 0.0]);
    assert_eq!(layer.class_attention(1), [0.0, 1.0]);
    assert_eq!(layer.class_attention_mean(), [0.0, 0.5]);
    assert_eq!(layer.patch_attention_mean(0), [1.0, 0.0]);
}

#[test]
fn mean_attention_distance_is_zero_for_self_and_grows_when_uniform() {
    let grid = 3;
    let tokens = grid * grid + 1;
    assert_eq!(
        mean_attention_distance(&diagonal(2, tokens), grid, 4),
        [0.0, 0.0]
    );
    let spread = mean_attention_distance(&uniform(1, tokens), grid, 4);
    // Mean distance between cells of a 3×3 grid, in units of 4 pixels.
    let mut expected = 0.0;
    for q in 0..9 {
        for k in 0..9 {
            let (dy, dx) = (
                (q / 3) as f32 - (k / 3) as f32,
                (q % 3) as f32 - (k % 3) as f32,
            );
            expected += (dy * dy + dx * dx).sqrt() / 81.0;
        }
    }
    assert!(
        (spread[0] - 4.0 * expected).abs() < 1e-4,
        "{spread:?} vs {}",
        4.0 * expected
    );
}

#[test]
fn position_similarity_is_one_on_the_diagonal_and_signed() {
    // Class token, then patches (1,0), (0,1), (-1,0).
    let embeddings = [9.0, 9.0, 1.0, 0.0, 0.0, 2.0, -3.0, 0.0];
    let sim = position_similarity(&embeddings, 4, 2);
    assert_eq!(sim.len(), 9);
    for i in 0..3 {
        assert!((sim[i * 3 + i] - 1.0).abs() < 1e-6);
    }
    assert!(sim[1].abs() < 1e-6);
    assert!((sim[2] + 1.0).abs() < 1e-6);
}

#[test]
fn filter_components_find_the_direction_of_largest_variance() {
    // Filters spread along (1, 1, 0) with a little noise along (0, 0, 1).
    let mut filters = Vec::new();
    for i in 0..20 {
        let t = i as f32 - 9.5;
        // + - - + per four filters: uncorrelated with t.
        let noise = if i % 4 == 0 || i % 4 == 3 { 0.1 } else { -0.1 };
        filters.extend_from_slice(&[t, t, noise]);
    }
    let components = filter_components(&filters, 20, 3, 2);
    let (first, share) = &components[0];
    let s = std::f32::consts::FRAC_1_SQRT_2;
    assert!(
        (first[0].abs() - s).abs() < 1e-4 && (first[1].abs() - s).abs() < 1e-4,
        "{first:?}"
    );
    assert!(first[2].abs() < 1e-4);
    assert!(*share > 0.99);
    let (second, _) = &components[1];
    assert!((second[2].abs() - 1.0).abs() < 1e-4, "{second:?}");
}

mod from_the_model {
    use vitlab::analysis::inference::{
        Classification, WeightInsight, attention_part, batch_attention_distance, classify,
        images_of,
    };
    use vitlab::data::images_tensor;
    use vitlab::model::VitConfig;
    use vitlab::native;
    use vitlab::weights;

    use crate::{device, to_vec};

    #[test]
    fn one_pass_gives_probabilities_and_every_map() {
        let device = device();
        let config = VitConfig::lab().with_depth(2);
        let model = config.init(&device);
        let any = vitlab::model::Classifier::Vit(model.clone());
        let dir = native::default_data_dir();
        let manifest = native::read_manifest(&dir).unwrap();
        let test = native::load_chunk(&dir, &manifest.test[0]).unwrap();
        let images = images_of(&test, 3);

        let pending = classify(&any, &images[..1], None, &device);
        let packed = to_vec(pending.packed);
        // One tensor holds the probabilities and every map: a single readback in the browser.
        assert_eq!(packed.len(), 10 + 2 * 8 * 50 * 50);
        let result = Classification::from_packed(&packed, &config.clone().into());
        assert_eq!(result.probabilities.len(), 10);
        assert!((result.probabilities.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert_eq!(result.attention.len(), 2);
        let best = result
            .probabilities
            .iter()
            .cloned()
            .fold(f32::MIN, f32::max);
        assert_eq!(result.probabilities[result.predicted()], best);
        // Each layer's maps are that layer's probabilities from the model itself.
        let output = model.forward_with_attention(images_tensor(&images[..1], &device));
        for (mine, theirs) in result.attention.iter().zip(output.attention) {
            assert_eq!(mine.values, to_vec(theirs));
        }
        let rollout = result.rollout();
        assert_eq!(rollout.len(), 49);
        assert!(rollout.iter().sum::<f32>() <= 1.0 + 1e-5);

        let pending = classify(&any, &images, None, &device);
        let packed = to_vec(pending.packed);
        let distances = batch_attention_distance(
            attention_part(&packed, images.len(), &config),
            images.len(),
            &config,
        );
        assert_eq!(distances.len(), 2);
        assert_eq!(distances[0].len(), config.heads);
        // The batch's mean per layer and head is the mean of each image's own figures.
        let alone: Vec<Vec<Vec<f32>>> = images
            .chunks(1)
            .map(|image| {
                let packed = to_vec(classify(&any, image, None, &device).packed);
                batch_attention_distance(attention_part(&packed, 1, &config), 1, &config)
            })
            .collect();
        for (layer, heads) in distances.iter().enumerate() {
            for (head, distance) in heads.iter().enumerate() {
                let mean =
                    alone.iter().map(|image| image[layer][head]).sum::<f32>() / alone.len() as f32;
                assert!((distance - mean).abs() < 1e-4, "{distance} vs {mean}");
            }
        }
        // Never farther than the grid's diagonal.
        let diagonal = (2.0f32 * 6.0 * 6.0).sqrt() * 4.0;
        assert!(
            distances
                .iter()
                .flatten()
                .all(|d| *d > 0.0 && *d <= diagonal)
        );
    }

    #[test]
    fn weight_insight_reads_the_embeddings() {
        let config = VitConfig::lab().with_depth(1);
        let bytes = crate::fresh_weights(config.clone());
        let insight = WeightInsight::from_weights(&weights::decode(&bytes).unwrap(), &config, 8);
        assert_eq!(insight.position_similarity.len(), 49 * 49);
        assert_eq!(insight.filter_components.len(), 8);
        assert_eq!(insight.filter_components[0].0.len(), 16);
        let shares: Vec<f32> = insight.filter_components.iter().map(|c| c.1).collect();
        assert!(shares.windows(2).all(|w| w[0] >= w[1]));
    }
}
