use vitlab::model::{CostError, ModelConfig, VitConfig};
use vitlab::weights::{self, NamedTensor, WeightsError};

use crate::{device, run_now, sample_images, to_vec};

fn small_config() -> VitConfig {
    VitConfig::lab()
        .with_depth(2)
        .with_dim(32)
        .with_heads(4)
        .with_mlp_dim(48)
}

fn saved(config: &VitConfig) -> Vec<u8> {
    let config = ModelConfig::from(config.clone());
    let model = config.init(&device());
    weights::to_safetensors(&model, &config)
}

#[test]
fn names_and_shapes_are_the_seed_state_dict() {
    let expected = weights::expected_tensors(&VitConfig::seed().into());
    let find = |name: &str| {
        expected
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("{name} missing"))
            .1
            .clone()
    };
    assert_eq!(expected.len(), 4 + 6 * 11 + 4);
    assert_eq!(find("patch_embed.proj.weight"), [64, 49]);
    assert_eq!(find("patch_embed.proj.bias"), [64]);
    assert_eq!(find("patch_embed.pos_embedding"), [1, 17, 64]);
    assert_eq!(find("patch_embed.cls_token"), [1, 1, 64]);
    assert_eq!(find("layers.5.norm1.weight"), [64]);
    assert_eq!(find("layers.0.norm1.bias"), [64]);
    assert_eq!(find("layers.3.attn.qkv.weight"), [192, 64]);
    assert!(!expected.iter().any(|(n, _)| n.ends_with("qkv.bias")));
    assert_eq!(find("layers.0.attn.proj.weight"), [64, 64]);
    assert_eq!(find("layers.0.attn.proj.bias"), [64]);
    assert_eq!(find("layers.2.norm2.weight"), [64]);
    assert_eq!(find("layers.1.mlp.0.weight"), [128, 64]);
    assert_eq!(find("layers.1.mlp.0.bias"), [128]);
    assert_eq!(find("layers.4.mlp.3.weight"), [64, 128]);
    assert_eq!(find("layers.4.mlp.3.bias"), [64]);
    assert_eq!(find("norm.weight"), [64]);
    assert_eq!(find("norm.bias"), [64]);
    assert_eq!(find("head.weight"), [10, 64]);
    assert_eq!(find("head.bias"), [10]);
}

#[test]
fn the_page_writes_the_same_bytes_as_the_cli() {
    // The page reads tensors back asynchronously (WebGPU needs it); on the CPU it must give
    // the bytes the synchronous writer gives.
    let config: ModelConfig = small_config().into();
    let model = config.init(&device());
    assert_eq!(
        run_now(weights::to_safetensors_async(&model, &config)).unwrap(),
        weights::to_safetensors(&model, &config)
    );
}

#[test]
fn save_then_load_gives_the_same_model_and_config() {
    let device = device();
    let config: ModelConfig = small_config().into();
    let model = config.init(&device);
    let bytes = weights::to_safetensors(&model, &config);
    let (loaded, loaded_config) = weights::load(&bytes, &device).unwrap();
    assert_eq!(loaded_config, config);
    let images = sample_images(2, 28, &device);
    let (before, after) = (
        to_vec(model.forward(images.clone())),
        to_vec(loaded.forward(images)),
    );
    assert!(
        before.iter().zip(&after).all(|(a, b)| (a - b).abs() < 1e-5),
        "{before:?} vs {after:?}"
    );
    // Saving again is byte-for-byte the same.
    assert_eq!(weights::to_safetensors(&loaded, &config), bytes);
}

#[test]
fn linear_weights_are_stored_transposed_like_pytorch() {
    let config = small_config();
    let file = weights::decode(&saved(&config)).unwrap();
    let head = file
        .tensors
        .iter()
        .find(|t| t.name == "head.weight")
        .unwrap();
    assert_eq!(head.shape, [10, 32]);
    // PyTorch: y = x Wᵀ + b. Check row 3 of W produces logit 3 for a one-hot input.
    let device = device();
    let model = file.into_model(&device).into_vit().unwrap();
    let input = burn::tensor::Tensor::<2>::zeros([1, 32], &device).slice_assign(
        [0..1, 5..6],
        burn::tensor::Tensor::<2>::ones([1, 1], &device),
    );
    let out = to_vec(model.head.forward(input));
    let bias = &file
        .tensors
        .iter()
        .find(|t| t.name == "head.bias")
        .unwrap()
        .values;
    assert!((out[3] - (head.values[3 * 32 + 5] + bias[3])).abs() < 1e-6);
}

#[test]
fn truncated_files_are_errors() {
    let bytes = saved(&small_config());
    assert_eq!(
        weights::decode(&bytes[..5]).unwrap_err(),
        WeightsError::TooShort(5)
    );
    for cut in [12, bytes.len() / 2, bytes.len() - 1] {
        let error = weights::decode(&bytes[..cut]).unwrap_err();
        assert!(
            matches!(
                error,
                WeightsError::TruncatedHeader { .. }
                    | WeightsError::HeaderTooLarge { .. }
                    | WeightsError::DataOutOfRange { .. }
            ),
            "cut at {cut}: {error}"
        );
    }
}

#[test]
fn corrupt_headers_are_errors() {
    let mut bytes = saved(&small_config());
    bytes[8] = b'!';
    assert!(matches!(
        weights::decode(&bytes),
        Err(WeightsError::Header(_))
    ));
    let garbage: Vec<u8> = (0..4096u32).map(|i| (i * 31 % 251) as u8).collect();
    assert!(weights::decode(&garbage).is_err());
}

/// The file with `edit` applied to its JSON header (the data section stays as it was).
fn edit_header(bytes: &[u8], edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let length = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + length]).unwrap();
    edit(&mut header);
    let header = serde_json::to_vec(&header).unwrap();
    [
        &(header.len() as u64).to_le_bytes()[..],
        &header,
        &bytes[8 + length..],
    ]
    .concat()
}

#[test]
fn half_precision_and_mis_sized_tensors_are_named() {
    // What a PyTorch export in half precision looks like to the loader.
    let bytes = saved(&small_config());
    let half = edit_header(&bytes, |header| header["head.bias"]["dtype"] = "F16".into());
    assert_eq!(
        weights::decode(&half).unwrap_err(),
        WeightsError::Dtype {
            name: "head.bias".into(),
            dtype: "F16".into()
        }
    );
    let short = edit_header(&bytes, |header| {
        let begin = header["head.bias"]["data_offsets"][0].as_u64().unwrap();
        header["head.bias"]["data_offsets"][1] = (begin + 4).into();
    });
    assert_eq!(
        weights::decode(&short).unwrap_err(),
        WeightsError::SizeMismatch {
            name: "head.bias".into(),
            shape: vec![10],
            bytes: 4
        }
    );
}

fn rewrite(config: &VitConfig, edit: impl FnOnce(&mut Vec<NamedTensor>)) -> Vec<u8> {
    let mut tensors = weights::decode(&saved(config)).unwrap().tensors;
    edit(&mut tensors);
    weights::encode(&config.clone().into(), &tensors)
}

#[test]
fn missing_extra_and_misshaped_tensors_are_named() {
    let config = small_config();
    let bytes = rewrite(&config, |tensors| {
        tensors.retain(|t| t.name != "layers.1.attn.qkv.weight");
        tensors.push(NamedTensor {
            name: "layers.0.attn.qkv.bias".into(),
            shape: vec![96],
            values: vec![0.0; 96],
        });
        let head = tensors.iter_mut().find(|t| t.name == "head.bias").unwrap();
        head.shape = vec![5];
        head.values.truncate(5);
    });
    let Err(WeightsError::Mismatch(mismatch)) = weights::decode(&bytes) else {
        panic!("expected a mismatch");
    };
    assert_eq!(mismatch.missing, ["layers.1.attn.qkv.weight"]);
    assert_eq!(mismatch.unexpected, ["layers.0.attn.qkv.bias"]);
    assert_eq!(
        mismatch.misshaped,
        [("head.bias".to_string(), vec![10], vec![5])]
    );
    let message = WeightsError::Mismatch(mismatch).to_string();
    assert!(
        message.contains("missing layers.1.attn.qkv.weight"),
        "{message}"
    );
}

#[test]
fn a_config_that_disagrees_with_the_tensors_is_a_mismatch() {
    let config = small_config();
    let tensors = weights::decode(&saved(&config)).unwrap().tensors;
    let bytes = weights::encode(&config.clone().with_depth(3).into(), &tensors);
    let Err(WeightsError::Mismatch(mismatch)) = weights::decode(&bytes) else {
        panic!("expected a mismatch");
    };
    assert!(
        mismatch
            .missing
            .iter()
            .all(|name| name.starts_with("layers.2."))
    );
    assert_eq!(mismatch.missing.len(), 11);
}

#[test]
fn non_finite_values_and_bad_configs_are_rejected() {
    let config = small_config();
    let bytes = rewrite(&config, |tensors| tensors[0].values[0] = f32::NAN);
    assert_eq!(
        weights::decode(&bytes).unwrap_err(),
        WeightsError::NonFinite("patch_embed.proj.weight".into())
    );
    let tensors = weights::decode(&saved(&config)).unwrap().tensors;
    let bytes = weights::encode(&config.clone().with_heads(5).into(), &tensors);
    assert!(matches!(
        weights::decode(&bytes),
        Err(WeightsError::Config(_))
    ));
    let huge = VitConfig::seed()
        .with_dim(4096)
        .with_heads(8)
        .with_depth(64);
    let bytes = weights::encode(&huge.into(), &[]);
    assert!(matches!(
        weights::decode(&bytes),
        Err(WeightsError::Cost(CostError::OverBudget { .. }))
    ));
}

#[test]
fn averaging_takes_the_element_wise_mean_and_refuses_other_configs() {
    let config = small_config();
    let a = weights::decode(&saved(&config)).unwrap();
    let b = weights::decode(&saved(&config)).unwrap();
    assert_ne!(a.tensors, b.tensors, "two initialisations differ");
    let mean = weights::average(&[a.clone(), b.clone()]).unwrap();
    assert_eq!(mean.config, config.clone().into());
    assert_eq!(mean.tensors.len(), a.tensors.len());
    for ((x, y), m) in a.tensors.iter().zip(&b.tensors).zip(&mean.tensors) {
        assert_eq!((&m.name, &m.shape), (&x.name, &x.shape));
        for ((p, q), r) in x.values.iter().zip(&y.values).zip(&m.values) {
            assert!((r - (p + q) / 2.0).abs() <= 1e-6 * (1.0 + p.abs()));
        }
    }

    let deeper = weights::decode(&saved(&config.clone().with_depth(3))).unwrap();
    let error = weights::average(&[a.clone(), deeper])
        .unwrap_err()
        .to_string();
    assert!(error.contains("another config"), "{error}");
    let mut missing = b;
    missing.tensors.retain(|t| t.name != "head.bias");
    let error = weights::average(&[a, missing]).unwrap_err().to_string();
    assert!(error.contains("head.bias"), "{error}");
    assert!(weights::average(&[]).is_err());
}

#[test]
fn configs_that_do_not_read_mnist_are_refused() {
    let tensors = weights::decode(&saved(&small_config())).unwrap().tensors;
    for config in [
        small_config().with_num_classes(5),
        small_config().with_image_size(32),
        small_config().with_channels(3),
    ] {
        let error =
            weights::decode(&weights::encode(&config.clone().into(), &tensors)).unwrap_err();
        assert!(
            matches!(error, WeightsError::NotMnist { .. }),
            "{config:?}: {error}"
        );
        assert!(error.to_string().contains("28×28"), "{error}");
    }
}

#[test]
fn a_parameter_count_past_usize_is_refused_not_wrapped() {
    // 3·dim² alone is past 2^64: a wrapping count could come out small and pass the limit.
    let absurd = small_config().with_dim(1 << 33).with_heads(8);
    assert_eq!(absurd.num_params(), usize::MAX);
    let error = weights::decode(&weights::encode(&absurd.into(), &[])).unwrap_err();
    assert!(
        matches!(error, WeightsError::Cost(CostError::Overflow)),
        "{error}"
    );
}
