//! The ViT against the CNN as the training set grows (the paper's inductive-bias argument on
//! MNIST): the figures `scripts/data-scaling.sh` measured, shipped beside the model card.

use serde::Deserialize;

use crate::model::Architecture;

/// One run of `scripts/data-scaling.sh`: a model trained on the first `images` training
/// images, with the test set scored once at its end.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ScalingPoint {
    pub model: Architecture,
    pub images: usize,
    /// Training images seen in the whole run (epochs × `images`), the same for every run.
    pub budget: usize,
    pub test_accuracy: f64,
    /// Training time on the machine the model card names.
    pub seconds: f64,
}

/// The shipped figures (`pretrained/data-scaling.json`).
pub const SHIPPED: &str = include_str!("../../pretrained/data-scaling.json");

/// Why the figures cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the data-scaling figures: {0}")]
pub struct ScalingError(String);

/// The points of `json`, each model's in order of training-set size.
pub fn points(json: &str) -> Result<Vec<ScalingPoint>, ScalingError> {
    let mut points: Vec<ScalingPoint> =
        serde_json::from_str(json).map_err(|e| ScalingError(e.to_string()))?;
    if let Some(bad) = points
        .iter()
        .find(|p| p.images == 0 || !(0.0..=1.0).contains(&p.test_accuracy))
    {
        return Err(ScalingError(format!(
            "{} images at accuracy {} is not a run",
            bad.images, bad.test_accuracy
        )));
    }
    points.sort_by_key(|p| (p.model.name(), p.images));
    Ok(points)
}

/// The training-set size from which on the ViT is at least as accurate as the CNN, if it
/// ever is among the sizes measured for both.
pub fn crossing(points: &[ScalingPoint]) -> Option<usize> {
    let of = |model: Architecture, images: usize| {
        points
            .iter()
            .find(|p| p.model == model && p.images == images)
            .map(|p| p.test_accuracy)
    };
    let mut sizes: Vec<usize> = points.iter().map(|p| p.images).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let both: Vec<(usize, bool)> = sizes
        .into_iter()
        .filter_map(|n| Some((n, of(Architecture::Vit, n)? >= of(Architecture::Cnn, n)?)))
        .collect();
    // The first size after which the ViT never trails again.
    let last_behind = both.iter().rposition(|&(_, ahead)| !ahead);
    match last_behind {
        None => both.first().map(|&(n, _)| n),
        Some(i) => both.get(i + 1).map(|&(n, _)| n),
    }
}
