//! The data-scaling figures the page charts: read, checked, and the crossing found.

use vitlab::analysis::data_scaling::{self, ScalingPoint, crossing, points};
use vitlab::model::Architecture;

fn point(model: Architecture, images: usize, test_accuracy: f64) -> ScalingPoint {
    ScalingPoint {
        model,
        images,
        budget: 150_000,
        test_accuracy,
        seconds: 1.0,
    }
}

#[test]
fn the_crossing_is_the_size_from_which_the_vit_never_trails() {
    use Architecture::{Cnn, Vit};
    let run = |vit: [f64; 3], cnn: [f64; 3]| {
        let sizes = [1000, 5000, 60000];
        let mut all: Vec<ScalingPoint> = (0..3).map(|i| point(Vit, sizes[i], vit[i])).collect();
        all.extend((0..3).map(|i| point(Cnn, sizes[i], cnn[i])));
        crossing(&all)
    };
    assert_eq!(run([0.90, 0.95, 0.99], [0.95, 0.97, 0.985]), Some(60000));
    assert_eq!(run([0.90, 0.98, 0.99], [0.95, 0.97, 0.98]), Some(5000));
    // Ahead once, behind again after: the crossing is after the last time it trails.
    assert_eq!(run([0.96, 0.95, 0.99], [0.95, 0.97, 0.98]), Some(60000));
    assert_eq!(run([0.90, 0.95, 0.97], [0.95, 0.97, 0.98]), None);
    assert_eq!(run([0.99, 0.99, 0.99], [0.95, 0.97, 0.98]), Some(1000));
}

#[test]
fn hostile_figures_are_refused_not_charted() {
    assert!(points("not json").is_err());
    let one = |model: &str, images: usize, accuracy: f64| {
        format!(
            r#"[{{"model":"{model}","images":{images},"budget":9,"test_accuracy":{accuracy},"seconds":1}}]"#
        )
    };
    assert!(points(&one("vit", 10, 0.9)).is_ok());
    assert!(points(&one("vit", 0, 0.9)).is_err());
    assert!(points(&one("vit", 10, 1.5)).is_err());
    assert!(points(&one("mlp", 10, 0.5)).is_err());
}

/// The shipped figures parse, and the model card's table says what they say.
#[test]
fn the_shipped_figures_are_the_model_card_s_table() {
    let shipped = points(data_scaling::SHIPPED).unwrap();
    let card =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/pretrained/README.md"))
            .unwrap();
    for p in &shipped {
        let row = card
            .lines()
            .find(|line| line.starts_with(&format!("| {} (seed", p.model.name())))
            .unwrap_or_else(|| panic!("no {} row in the card", p.model.name()));
        let cell = format!("{:.2} %", 100.0 * p.test_accuracy);
        assert!(row.contains(&cell), "{row} lacks {cell}");
    }
}
