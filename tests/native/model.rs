use burn::module::Module;
use vitlab::model::{ConfigError, VitConfig};

use crate::{device, sample_images, to_vec};

#[test]
fn seed_preset_matches_the_pytorch_model() {
    let config = VitConfig::seed();
    assert_eq!(
        (
            config.image_size,
            config.patch_size,
            config.dim,
            config.depth,
            config.heads,
            config.mlp_dim
        ),
        (28, 7, 64, 6, 8, 128)
    );
    assert_eq!(config.num_params(), 204_810);
    assert_eq!(config.init(&device()).num_params(), 204_810);
}

#[test]
fn parameter_count_formula_agrees_with_the_module_for_other_sizes() {
    let config = VitConfig::lab()
        .with_depth(2)
        .with_dim(32)
        .with_heads(4)
        .with_mlp_dim(48);
    assert_eq!(config.init(&device()).num_params(), config.num_params());
}

#[test]
fn logits_and_attention_have_the_documented_shapes() {
    let device = device();
    for config in [VitConfig::seed(), VitConfig::lab().with_depth(2)] {
        let model = config.init(&device);
        let output = model.forward_with_attention(sample_images(3, 28, &device));
        assert_eq!(output.logits.dims(), [3, 10]);
        assert_eq!(output.attention.len(), config.depth);
        let tokens = config.num_tokens();
        for layer in &output.attention {
            assert_eq!(layer.dims(), [3, config.heads, tokens, tokens]);
        }
    }
}

#[test]
fn attention_rows_sum_to_one() {
    let device = device();
    let config = VitConfig::lab().with_depth(2);
    let model = config.init(&device);
    let output = model.forward_with_attention(sample_images(2, 28, &device));
    for layer in output.attention {
        let sums = to_vec(layer.clone().sum_dim(3));
        assert!(sums.iter().all(|sum| (sum - 1.0).abs() < 1e-5), "{sums:?}");
        assert!(to_vec(layer).iter().all(|p| *p >= 0.0));
    }
}

#[test]
fn forward_and_forward_with_attention_agree() {
    let device = device();
    let model = VitConfig::seed().init(&device);
    let images = sample_images(2, 28, &device);
    let plain = to_vec(model.forward(images.clone()));
    let with_attention = to_vec(model.forward_with_attention(images).logits);
    assert_eq!(plain, with_attention);
}

#[test]
fn invalid_configs_are_named() {
    assert_eq!(
        VitConfig::seed().with_patch_size(5).validate(),
        Err(ConfigError::PatchDoesNotDivideImage {
            patch: 5,
            image: 28
        })
    );
    assert_eq!(
        VitConfig::seed().with_heads(5).validate(),
        Err(ConfigError::HeadsDoNotDivideDim { heads: 5, dim: 64 })
    );
    assert_eq!(
        VitConfig::seed().with_dropout(1.0).validate(),
        Err(ConfigError::Dropout(1.0))
    );
    assert_eq!(
        VitConfig::seed().with_depth(0).validate(),
        Err(ConfigError::Zero("depth"))
    );
    assert!(VitConfig::preset("lab").is_some() && VitConfig::preset("huge").is_none());
}
