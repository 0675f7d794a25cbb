use vitlab::shipped::{DEFAULT_WEIGHTS, SHIPPED_MODELS, is_shipped};

#[test]
fn the_default_weights_are_the_first_shipped_model() {
    assert_eq!(SHIPPED_MODELS[0].0, DEFAULT_WEIGHTS);
}

#[test]
fn only_shipped_addresses_count_as_shipped() {
    for (url, _) in SHIPPED_MODELS {
        assert!(is_shipped(url), "{url}");
    }
    assert!(!is_shipped("upload vit-lab.safetensors"));
    assert!(!is_shipped("run #1234"));
    assert!(!is_shipped(
        "https://example.org/pretrained/vit-lab.safetensors"
    ));
    assert!(!is_shipped(""));
}
