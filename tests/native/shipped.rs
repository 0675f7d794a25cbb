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

#[test]
fn every_shipped_address_is_a_model_of_pretrained_as_the_site_compresses_it() {
    use std::io::Write;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (url, _) in SHIPPED_MODELS {
        let plain = url
            .strip_suffix(".gz")
            .unwrap_or_else(|| panic!("{url} is not served gzip-compressed"));
        let bytes = std::fs::read(root.join(plain)).unwrap_or_else(|e| panic!("{plain}: {e}"));
        // As scripts/stamp.sh writes it (gzip -9).
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(&bytes).unwrap();
        let packed = encoder.finish().unwrap();
        assert!(
            packed.len() < bytes.len(),
            "{url}: gzip makes it no smaller"
        );
        let inflated = vitlab::weights::ungzipped(packed, bytes.len()).unwrap();
        assert_eq!(inflated, bytes, "{url}");
        vitlab::weights::decode(&inflated).unwrap_or_else(|e| panic!("{url}: {e}"));
    }
}
