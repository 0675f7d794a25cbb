//! Attention as the model learns: at each evaluation, the maps and distances of a few fixed
//! probe digits (and the drawing on the pad, if any), so the page can replay how heads go from
//! diffuse to local and global. Pure: the worker fills it, the page and the runs table keep
//! and draw it.

use serde::{Deserialize, Serialize};

use super::inference::{attention_part, batch_attention_distance};
use super::insight::{self, LayerAttention};
use crate::model::VitConfig;

/// Test digits probed at each evaluation: the first ones of the test set.
pub const PROBE_DIGITS: usize = 4;
/// Snapshots a timeline keeps; past it every other old one goes, the newest kept.
pub const MAX_SNAPSHOTS: usize = 48;

/// The probes' attention at one evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttentionSnapshot {
    pub step: usize,
    /// Per probe: attention rollout through all layers, one weight per patch.
    pub rollout: Vec<Vec<f32>>,
    /// Per probe, per layer: the class token's attention, mean over heads.
    pub layers: Vec<Vec<Vec<f32>>>,
    /// Per layer, per head: mean attention distance over the probes, in pixels.
    pub distance: Vec<Vec<f32>>,
    /// The drawing probed after the test digits, if there was one: it changes from one
    /// evaluation to the next, so each snapshot keeps its own.
    #[serde(default)]
    pub drawing: Option<Vec<u8>>,
}

/// Values kept to four decimals: a timeline is stored and sent as JSON, and a map drawn from
/// 0.1234 looks as one from 0.123456789.
fn kept(values: Vec<f32>) -> Vec<f32> {
    values
        .into_iter()
        .map(|v| (v * 1e4).round() / 1e4)
        .collect()
}

impl AttentionSnapshot {
    /// From the packed read-back (see [`super::inference::PendingClassification`]) of
    /// `probes` images.
    pub fn of_packed(packed: &[f32], probes: usize, config: &VitConfig, step: usize) -> Self {
        let attention = attention_part(packed, probes, config);
        // Layer-major, `[depth · probes]`: layer l of probe p is at l · probes + p.
        let all = LayerAttention::split_batch(
            attention,
            config.depth * probes,
            config.heads,
            config.num_tokens(),
        );
        let of_probe = |p: usize| -> Vec<LayerAttention> {
            (0..config.depth)
                .filter_map(|l| all.get(l * probes + p).cloned())
                .collect()
        };
        Self {
            step,
            rollout: (0..probes)
                .map(|p| kept(insight::rollout(&of_probe(p))))
                .collect(),
            layers: (0..probes)
                .map(|p| {
                    of_probe(p)
                        .iter()
                        .map(|layer| kept(layer.class_attention_mean()))
                        .collect()
                })
                .collect(),
            distance: batch_attention_distance(attention, probes, config)
                .into_iter()
                .map(kept)
                .collect(),
            drawing: None,
        }
    }
}

/// A run's snapshots, with what is needed to draw them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// Patches per side, and their side in pixels, of the run's model.
    pub grid: usize,
    pub patch_size: usize,
    /// The test digits probed (28×28 grey levels), in the snapshots' order; a snapshot's
    /// drawing, if any, comes after them.
    pub probes: Vec<Vec<u8>>,
    pub snapshots: Vec<AttentionSnapshot>,
}

impl Timeline {
    /// The index of the snapshot shown when `picked` is asked for: that one, or the newest
    /// when none is (`None` follows the newest as evaluations come in) or it is past the end.
    pub fn shown(&self, picked: Option<usize>) -> usize {
        let newest = self.snapshots.len().saturating_sub(1);
        picked.unwrap_or(newest).min(newest)
    }

    /// The longest distance two patch centres can be apart, in pixels: the distance chart's
    /// top.
    pub fn max_distance(&self) -> f32 {
        (2.0f32).sqrt() * (self.grid.max(2) - 1) as f32 * self.patch_size as f32
    }

    /// Adds a snapshot taken on the test digits `probes` (and the snapshot's own drawing) by a
    /// model of `grid` patches a side, each `patch_size` pixels; a timeline whose test digits
    /// or model changed starts again from it.
    pub fn push(
        &mut self,
        (grid, patch_size): (usize, usize),
        probes: Vec<Vec<u8>>,
        snapshot: AttentionSnapshot,
    ) {
        if self.grid != grid || self.patch_size != patch_size || self.probes != probes {
            self.snapshots.clear();
        }
        self.grid = grid;
        self.patch_size = patch_size;
        self.probes = probes;
        self.snapshots.retain(|s| s.step < snapshot.step);
        self.snapshots.push(snapshot);
        if self.snapshots.len() > MAX_SNAPSHOTS {
            self.halve();
        }
    }

    /// Every other snapshot dropped, the newest kept.
    pub fn halve(&mut self) {
        let Some(newest) = self.snapshots.pop() else {
            return;
        };
        self.snapshots = self.snapshots.iter().cloned().step_by(2).collect();
        self.snapshots.push(newest);
    }
}
