//! What the drawing worker sends the page of one drawing (`analysis::reading`): the maps the
//! lab draws, computed from the model's own attention, and a packed form that reads back as
//! written and refuses the wrong length.

use vitlab::analysis::inference::{Classification, classify, images_of};
use vitlab::analysis::insight::mean_attention_distance;
use vitlab::analysis::reading::Reading;
use vitlab::model::{CnnConfig, ModelConfig, VitConfig};
use vitlab::{native, weights};

use crate::{device, to_vec};

/// The shipped lab model and its classification of a real test digit. (Loaded, not
/// initialised: an initialisation draws from Burn's one random generator per process, which
/// the training tests running beside this one seed and draw from.)
fn classified() -> (VitConfig, Classification) {
    let device = device();
    let bytes = std::fs::read("pretrained/vit-lab.safetensors").unwrap();
    let file = weights::decode(&bytes).unwrap();
    let config = file.config.vit().unwrap().clone();
    let model = file.into_model(&device);
    let dir = native::default_data_dir();
    let manifest = native::read_manifest(&dir).unwrap();
    let test = native::load_chunk(&dir, &manifest.test[0]).unwrap();
    let packed = to_vec(classify(&model, &images_of(&test, 1), None, &device).packed);
    let classification = Classification::from_packed(&packed, &config.clone().into());
    (config, classification)
}

#[test]
fn each_map_is_the_one_the_page_drew_from_the_whole_attention() {
    let (config, classification) = classified();
    let reading = Reading::of(&classification, &config.clone().into());
    assert_eq!(reading.probabilities, classification.probabilities);
    assert_eq!(reading.rollout, classification.rollout());
    assert!(reading.fits(config.grid_size(), config.depth, config.heads));
    for (l, layer) in classification.attention.iter().enumerate() {
        for head in 0..config.heads {
            assert_eq!(reading.class_maps[l][head], layer.class_attention(head));
        }
        assert_eq!(
            reading.class_maps[l][config.heads],
            layer.class_attention_mean()
        );
        for patch in [0, 24, 48] {
            assert_eq!(
                reading.patch_maps[l][patch * 49..(patch + 1) * 49],
                layer.patch_attention_mean(patch)[..]
            );
        }
        assert_eq!(
            reading.distances[l],
            mean_attention_distance(layer, config.grid_size(), config.patch_size)
        );
    }
    // Under a sixth of the values the whole attention holds (heads averaged for every patch).
    let whole = classification.probabilities.len() + 6 * 8 * 50 * 50;
    let packed = reading.to_packed();
    assert!(packed.len() * 6 < whole, "{} of {whole}", packed.len());
}

#[test]
fn the_packed_reading_reads_back_as_written_and_only_at_its_length() {
    let (config, classification) = classified();
    let model: ModelConfig = config.clone().into();
    let reading = Reading::of(&classification, &model);
    let packed = reading.to_packed();
    assert_eq!(packed.len(), Reading::packed_len(&model));
    assert_eq!(Reading::from_packed(&packed, &model), Some(reading.clone()));
    assert_eq!(Reading::from_packed(&packed[1..], &model), None);
    let mut longer = packed.clone();
    longer.push(0.0);
    assert_eq!(Reading::from_packed(&longer, &model), None);
    // Read with another model's shape, it is refused or does not fit that model.
    let deeper: ModelConfig = config.clone().with_depth(5).into();
    assert_eq!(Reading::from_packed(&packed, &deeper), None);
    assert!(!reading.fits(config.grid_size(), config.depth, 4));
    assert!(!reading.fits(4, config.depth, config.heads));

    // A CNN's reading is its probabilities alone.
    let cnn = ModelConfig::Cnn {
        cnn: CnnConfig::seed(),
    };
    let probabilities = vec![0.1; 10];
    let only = Reading::from_packed(&probabilities, &cnn).unwrap();
    assert_eq!(only.probabilities, probabilities);
    assert!(only.class_maps.is_empty() && only.rollout.is_empty());
    assert_eq!(only.to_packed(), probabilities);
}
