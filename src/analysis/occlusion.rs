//! Patch occlusion, ViT beside CNN: test images with a growing fraction of their patches
//! hidden (set to the background, 0, in the ViT's patch grid), in a random order or the ViT's
//! most relevant patches first, and each model's accuracy on them. The same pixels are hidden
//! from both models, so the two curves differ by the model alone: the paper's robustness
//! claim (and Naseer et al., 2021, "Intriguing properties of vision transformers") made
//! visible on MNIST.
//!
//! A ViT can also drop the patches instead: their tokens leave the sequence, so nothing of
//! them is read at all, not even "blank here" (Naseer et al. drop patches this way). A CNN has
//! no such choice; the curves show the ViT both ways.

use serde::{Deserialize, Serialize};

use crate::data::{IMAGE_PIXELS, IMAGE_SIDE};

/// The fractions of patches hidden, from none to nine in ten.
pub const FRACTIONS: [f32; 10] = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

/// Which patches go first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Order {
    /// A random order, seeded per image.
    Random,
    /// The ViT's gradient relevance for its prediction, highest first.
    MostRelevant,
}

/// `image` with the patches in `hidden` (row-major indices of a `grid × grid` split) set to 0.
pub fn occlude(image: &[u8; IMAGE_PIXELS], grid: usize, hidden: &[usize]) -> [u8; IMAGE_PIXELS] {
    let mut out = *image;
    let side = IMAGE_SIDE / grid.max(1);
    for &patch in hidden {
        let (row, col) = (patch / grid.max(1), patch % grid.max(1));
        for y in row * side..((row + 1) * side).min(IMAGE_SIDE) {
            for x in col * side..((col + 1) * side).min(IMAGE_SIDE) {
                out[y * IMAGE_SIDE + x] = 0;
            }
        }
    }
    out
}

/// The patches in a random order drawn from `seed` (Fisher–Yates).
pub fn random_order(patches: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..patches).collect();
    for i in (1..patches).rev() {
        let j = (crate::rng::mix(seed, i as u64) % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// The patches by relevance, highest first (ties by position).
pub fn relevance_order(relevance: &[f32]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..relevance.len()).collect();
    order.sort_by(|&a, &b| relevance[b].total_cmp(&relevance[a]).then(a.cmp(&b)));
    order
}

/// The patches of `0..patches` not in `hidden`, in order: the tokens a ViT keeps when the
/// others are dropped.
pub fn kept_patches(patches: usize, hidden: &[usize]) -> Vec<usize> {
    let mut kept = vec![true; patches];
    for &patch in hidden {
        if let Some(keep) = kept.get_mut(patch) {
            *keep = false;
        }
    }
    (0..patches).filter(|&p| kept[p]).collect()
}

/// How many of `patches` a fraction hides.
pub fn hidden_count(fraction: f32, patches: usize) -> usize {
    ((fraction.clamp(0.0, 1.0) * patches as f32).round() as usize).min(patches)
}

/// Accuracy against the fraction of patches hidden, per model and order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OcclusionCurves {
    /// Patches per side of the grid hidden in.
    pub grid: usize,
    /// Test images measured.
    pub images: usize,
    pub fractions: Vec<f32>,
    pub vit_random: Vec<f32>,
    pub vit_relevant: Vec<f32>,
    pub cnn_random: Vec<f32>,
    pub cnn_relevant: Vec<f32>,
    /// The ViT with the same patches' tokens dropped rather than their pixels blanked.
    pub vit_dropped_random: Vec<f32>,
    pub vit_dropped_relevant: Vec<f32>,
}

/// Both models' probabilities for one drawing with some patches hidden, and the ViT's with
/// those patches' tokens dropped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub vit: Vec<f32>,
    pub vit_dropped: Vec<f32>,
    pub cnn: Vec<f32>,
}

impl Comparison {
    /// What the lab's line says of it, with `hidden` patches hidden: each model's class and
    /// its probability.
    pub fn summary(&self, hidden: usize) -> String {
        format!(
            "{hidden} hidden · ViT reads {} · CNN reads {} · ViT with their tokens dropped reads {}",
            top(&self.vit),
            top(&self.cnn),
            top(&self.vit_dropped)
        )
    }
}

/// A model's reading: its most probable class and that probability, as "7 (98%)".
fn top(probabilities: &[f32]) -> String {
    let class = crate::analysis::inference::most_probable(probabilities);
    probabilities
        .get(class)
        .map_or_else(|| "–".into(), |p| format!("{class} ({:.0}%)", 100.0 * p))
}

impl OcclusionCurves {
    /// Each curve with its name, in the CSV's order.
    pub fn series(&self) -> [(&'static str, &[f32]); 6] {
        [
            ("vit random", &self.vit_random),
            ("vit most relevant first", &self.vit_relevant),
            ("cnn random", &self.cnn_random),
            ("cnn most relevant first", &self.cnn_relevant),
            ("vit tokens dropped random", &self.vit_dropped_random),
            (
                "vit tokens dropped most relevant first",
                &self.vit_dropped_relevant,
            ),
        ]
    }

    /// One row per fraction: each curve's accuracy there.
    pub fn csv(&self) -> String {
        let series = self.series();
        let names: Vec<&str> = series.iter().map(|(name, _)| *name).collect();
        let mut csv = format!("fraction hidden,{}\n", names.join(","));
        for (i, fraction) in self.fractions.iter().enumerate() {
            let values: Vec<String> = series
                .iter()
                .map(|(_, curve)| curve.get(i).map_or(String::new(), f32::to_string))
                .collect();
            csv.push_str(&format!("{fraction},{}\n", values.join(",")));
        }
        csv
    }
}

#[cfg(feature = "train")]
pub use measure::{compare_async, occlusion_curves_async};

#[cfg(feature = "train")]
mod measure {
    use burn::tensor::{Device, Tensor};

    use super::{
        Comparison, FRACTIONS, OcclusionCurves, hidden_count, kept_patches, occlude, random_order,
        relevance_order,
    };
    use crate::analysis::explanation::probabilities;
    use crate::analysis::relevance::{explaining_model, relevance_async};
    use crate::data::{IMAGE_PIXELS, IMAGE_SIDE, images_tensor};
    use crate::model::{Classifier, VisionTransformer};
    use crate::train::predictions;
    use crate::weights::{ReadbackError, WeightsFile, read_all_async};

    /// Images classified per forward pass.
    const BATCH: usize = 250;

    /// The class each row of `logits` predicts, read back.
    ///
    /// # Shapes
    /// - logits: `[batch, classes]`
    async fn read_predictions(logits: Tensor<2>) -> Result<Vec<usize>, ReadbackError> {
        let [values] =
            <[Vec<f32>; 1]>::try_from(read_all_async(vec![predictions(logits).float()]).await?)
                .map_err(|_| ReadbackError("no predictions came back".into()))?;
        Ok(values.into_iter().map(|p| p as usize).collect())
    }

    /// Each model's predictions for `images`, read back once per batch.
    async fn predicted(
        model: &Classifier,
        images: &[[u8; IMAGE_PIXELS]],
        device: &Device,
    ) -> Result<Vec<usize>, ReadbackError> {
        let mut all = Vec::with_capacity(images.len());
        for batch in images.chunks(BATCH) {
            let logits = model.forward(images_tensor(batch, device)); // [B, C]
            all.extend(read_predictions(logits).await?);
        }
        Ok(all)
    }

    /// The ViT's predictions for `images` with only the patches in `kept` (one list per
    /// image, all as long) as tokens, read back once per batch.
    async fn predicted_kept(
        model: &VisionTransformer,
        images: &[[u8; IMAGE_PIXELS]],
        kept: &[Vec<usize>],
        device: &Device,
    ) -> Result<Vec<usize>, ReadbackError> {
        let mut all = Vec::with_capacity(images.len());
        for (batch, kept) in images.chunks(BATCH).zip(kept.chunks(BATCH)) {
            let logits = model.forward_kept(images_tensor(batch, device), kept); // [B, C]
            all.extend(read_predictions(logits).await?);
        }
        Ok(all)
    }

    fn accuracy(predicted: &[usize], labels: &[u8]) -> f32 {
        let correct = predicted
            .iter()
            .zip(labels)
            .filter(|(p, l)| **p == usize::from(**l))
            .count();
        correct as f32 / labels.len().max(1) as f32
    }

    /// Both models' probabilities for `image` with the patches in `hidden` blanked, and the
    /// ViT's with their tokens dropped instead: three forward passes, one readback.
    pub async fn compare_async(
        vit: &VisionTransformer,
        cnn: &Classifier,
        image: &[u8; IMAGE_PIXELS],
        hidden: &[usize],
        device: &Device,
    ) -> Result<Comparison, ReadbackError> {
        let grid = IMAGE_SIDE / vit.patch_embed.patch_size.max(1);
        let blanked = images_tensor(&[occlude(image, grid, hidden)], device); // [1, 1, 28, 28]
        let kept = [kept_patches(grid * grid, hidden)];
        let logits = vec![
            vit.forward(blanked.clone()).flatten::<1>(0, 1), // [C]
            vit.forward_kept(images_tensor(&[*image], device), &kept) // [1, C]
                .flatten::<1>(0, 1), // [C]
            cnn.forward(blanked).flatten::<1>(0, 1),         // [C]
        ];
        let mut read = read_all_async(logits).await?.into_iter();
        let mut next = || probabilities(&read.next().unwrap_or_default());
        Ok(Comparison {
            vit: next(),
            vit_dropped: next(),
            cnn: next(),
        })
    }

    /// The curves of the ViT `vit` (its weights) beside the CNN `cnn` on `images` and their
    /// `labels`, computed on `device`; the random orders are drawn from `seed`.
    pub async fn occlusion_curves_async(
        vit: &WeightsFile,
        cnn: &WeightsFile,
        images: &[[u8; IMAGE_PIXELS]],
        labels: &[u8],
        device: &Device,
        seed: u64,
    ) -> Result<OcclusionCurves, ReadbackError> {
        let config = vit
            .config
            .vit()
            .cloned()
            .ok_or_else(|| ReadbackError("the first model is not a ViT".into()))?;
        let grid = config.grid_size();
        let patches = grid * grid;
        let explainer = explaining_model(vit, device)
            .ok_or_else(|| ReadbackError("the first model is not a ViT".into()))?;
        let explaining = device.clone().autodiff();
        let mut relevant = Vec::with_capacity(images.len());
        for image in images {
            let input: Tensor<4> = images_tensor(std::slice::from_ref(image), &explaining);
            let relevance = relevance_async(&explainer, &config, input, None).await?;
            relevant.push(relevance_order(&relevance.patches));
        }
        let random: Vec<Vec<usize>> = (0..images.len())
            .map(|i| random_order(patches, crate::rng::mix(seed, i as u64)))
            .collect();
        let (vit_model, cnn_model) = (vit.into_model(device), cnn.into_model(device));
        let Classifier::Vit(dropping) = &vit_model else {
            return Err(ReadbackError("the first model is not a ViT".into()));
        };
        let mut curves = OcclusionCurves {
            grid,
            images: images.len(),
            fractions: FRACTIONS.to_vec(),
            vit_random: Vec::new(),
            vit_relevant: Vec::new(),
            cnn_random: Vec::new(),
            cnn_relevant: Vec::new(),
            vit_dropped_random: Vec::new(),
            vit_dropped_relevant: Vec::new(),
        };
        for fraction in FRACTIONS {
            let hide = hidden_count(fraction, patches);
            let masked = |orders: &[Vec<usize>]| -> Vec<[u8; IMAGE_PIXELS]> {
                images
                    .iter()
                    .zip(orders)
                    .map(|(image, order)| occlude(image, grid, &order[..hide]))
                    .collect()
            };
            let (by_chance, by_relevance) = (masked(&random), masked(&relevant));
            let kept = |orders: &[Vec<usize>]| -> Vec<Vec<usize>> {
                orders
                    .iter()
                    .map(|order| kept_patches(patches, &order[..hide]))
                    .collect()
            };
            let score = |p: Vec<usize>| accuracy(&p, labels);
            curves
                .vit_random
                .push(score(predicted(&vit_model, &by_chance, device).await?));
            curves
                .vit_relevant
                .push(score(predicted(&vit_model, &by_relevance, device).await?));
            curves
                .cnn_random
                .push(score(predicted(&cnn_model, &by_chance, device).await?));
            curves
                .cnn_relevant
                .push(score(predicted(&cnn_model, &by_relevance, device).await?));
            curves.vit_dropped_random.push(score(
                predicted_kept(dropping, images, &kept(&random), device).await?,
            ));
            curves.vit_dropped_relevant.push(score(
                predicted_kept(dropping, images, &kept(&relevant), device).await?,
            ));
        }
        Ok(curves)
    }
}
