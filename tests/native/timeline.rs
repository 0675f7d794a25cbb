//! The attention timeline's snapshots: what the worker computes at an evaluation.

use vitlab::analysis::inference::{self, Classification};
use vitlab::analysis::timeline::{AttentionSnapshot, MAX_SNAPSHOTS, Timeline};
use vitlab::data::IMAGE_PIXELS;
use vitlab::model::VitConfig;

use crate::{device, to_vec};

fn probes() -> Vec<[u8; IMAGE_PIXELS]> {
    (0..3)
        .map(|p| std::array::from_fn(|i| ((i * (p + 3) * 37) % 256) as u8))
        .collect()
}

#[test]
fn a_snapshot_holds_each_probe_s_maps_as_one_classification_gives_them() {
    let config = VitConfig::seed().with_depth(2).with_heads(4);
    let model = vitlab::model::Classifier::Vit(config.init(&device()));
    let images = probes();
    let packed = to_vec(inference::classify(&model, &images, None, &device()).packed);
    let snapshot = AttentionSnapshot::of_packed(&packed, images.len(), &config, 300);
    let patches = config.grid_size() * config.grid_size();
    assert_eq!(snapshot.step, 300);
    assert_eq!(snapshot.rollout.len(), 3);
    assert!(snapshot.rollout.iter().all(|r| r.len() == patches));
    assert!(
        snapshot
            .layers
            .iter()
            .all(|p| p.len() == 2 && p.iter().all(|m| m.len() == patches))
    );
    assert_eq!(snapshot.distance.len(), 2);
    assert!(
        snapshot
            .distance
            .iter()
            .all(|l| l.len() == 4 && l.iter().all(|d| d.is_finite() && *d >= 0.0))
    );
    // Probe 2 alone, as the draw panel would classify it: the same maps, to the 4 decimals kept.
    let alone = to_vec(inference::classify(&model, &images[2..], None, &device()).packed);
    let alone = Classification::from_packed(&alone, &config.clone().into());
    for (kept, exact) in snapshot.rollout[2].iter().zip(alone.rollout()) {
        assert!((kept - exact).abs() <= 6e-5, "{kept} against {exact}");
    }
    for (l, layer) in alone.attention.iter().enumerate() {
        for (kept, exact) in snapshot.layers[2][l]
            .iter()
            .zip(layer.class_attention_mean())
        {
            assert!(
                (kept - exact).abs() <= 6e-5,
                "layer {l}: {kept} against {exact}"
            );
        }
    }
}

fn snapshot(step: usize) -> AttentionSnapshot {
    AttentionSnapshot {
        step,
        rollout: vec![vec![0.5; 16]],
        layers: vec![vec![vec![0.5; 16]]],
        distance: vec![vec![3.0]],
        drawing: None,
    }
}

#[test]
fn a_timeline_stays_short_keeps_its_newest_and_starts_again_for_another_model() {
    let mut timeline = Timeline::default();
    let probe = vec![vec![0u8; IMAGE_PIXELS]];
    for step in 1..=200 {
        timeline.push((4, 7), probe.clone(), snapshot(step * 100));
    }
    assert!(timeline.snapshots.len() <= MAX_SNAPSHOTS);
    assert_eq!(timeline.snapshots.last().unwrap().step, 20_000);
    assert!(timeline.snapshots.windows(2).all(|w| w[0].step < w[1].step));
    // A resumed run evaluates a step again: the old snapshot of it and after goes.
    timeline.push((4, 7), probe.clone(), snapshot(19_000));
    assert_eq!(timeline.snapshots.last().unwrap().step, 19_000);
    assert!(timeline.snapshots.iter().all(|s| s.step <= 19_000));
    // A drawing probed at one evaluation and not the next keeps the timeline whole, each
    // snapshot with its own drawing.
    let before = timeline.snapshots.len();
    let drawn = AttentionSnapshot {
        drawing: Some(vec![255; IMAGE_PIXELS]),
        ..snapshot(19_100)
    };
    timeline.push((4, 7), probe.clone(), drawn);
    timeline.push((4, 7), probe.clone(), snapshot(19_200));
    assert_eq!(timeline.snapshots.len(), before + 2);
    assert!(timeline.snapshots[before].drawing.is_some());
    timeline.push((7, 4), probe, snapshot(100));
    assert_eq!(
        timeline.snapshots.len(),
        1,
        "another grid: a timeline of its own"
    );
}

#[test]
fn the_snapshot_shown_is_the_one_picked_or_else_the_newest() {
    let mut timeline = Timeline::default();
    assert_eq!(
        timeline.shown(None),
        0,
        "an empty timeline shows nothing past its start"
    );
    let probe = vec![vec![0u8; IMAGE_PIXELS]];
    for step in [100, 200, 300] {
        timeline.push((4, 7), probe.clone(), snapshot(step));
    }
    assert_eq!(timeline.shown(None), 2, "following the newest");
    assert_eq!(timeline.shown(Some(0)), 0);
    assert_eq!(timeline.shown(Some(1)), 1);
    assert_eq!(
        timeline.shown(Some(9)),
        2,
        "a pick past the end shows the newest"
    );
    // A 4×4 grid of 7-pixel patches: corner to corner is 3 patches across and down.
    assert!((timeline.max_distance() - 3.0 * 7.0 * 2f32.sqrt()).abs() < 1e-4);
}
