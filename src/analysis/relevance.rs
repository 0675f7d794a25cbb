//! What the gradient relevance of [`gradient_relevance`] needs from the model: every layer's
//! attention and the class score's gradient with respect to it, from one forward and one
//! backward pass on an autodiff device, read back at once. Burn keeps the gradients of leaves
//! only, so each layer's attention gets a zero probe that requires a gradient
//! (`MultiHeadAttention::attend_probed`): the probe's gradient is the attention's.

use burn::module::Module;
use burn::tensor::{Device, Tensor};

use super::explanation::{Explanation, probabilities};
use super::insight::{LayerAttention, gradient_relevance};
use crate::model::{VisionTransformer, VitConfig};
use crate::weights::{ReadbackError, WeightsFile, read_all_async};

/// Gradient relevance for one image and one class.
#[derive(Debug, Clone, PartialEq)]
pub struct Relevance {
    /// The class explained: the one asked for, or the model's prediction.
    pub class: usize,
    /// One relevance per patch, row-major over the grid.
    pub patches: Vec<f32>,
}

/// The ViT of `file` ready to explain on `device`: on its autodiff twin, frozen (no dropout,
/// no parameter gradients). `None` for a CNN.
pub fn explaining_model(file: &WeightsFile, device: &Device) -> Option<VisionTransformer> {
    file.into_model(&device.clone().autodiff())
        .freeze()
        .into_vit()
}

/// The relevance of `image`'s patches for `class` (the predicted class when `None`).
///
/// # Shapes
/// - image: `[1, channels, height, width]`, normalised pixels, on `model`'s (autodiff) device
pub async fn relevance_async(
    model: &VisionTransformer,
    config: &VitConfig,
    image: Tensor<4>,
    class: Option<usize>,
) -> Result<Relevance, ReadbackError> {
    Ok(probe_async(model, config, image, class, false).await?.0)
}

/// The relevance of [`relevance_async`] and, where `lens`, the logit lens's logits per block
/// from the same pass and readback.
async fn probe_async(
    model: &VisionTransformer,
    config: &VitConfig,
    image: Tensor<4>,
    class: Option<usize>,
    lens: bool,
) -> Result<(Relevance, Vec<Vec<f32>>), ReadbackError> {
    let device = image.device();
    let (heads, tokens) = (config.heads, config.num_tokens());
    let shape = [1, heads, tokens, tokens];
    let probes: Vec<Tensor<4>> = (0..config.depth)
        .map(|_| Tensor::<4>::zeros(shape, &device).require_grad())
        .collect(); // depth × [1, H, N, N]
    let (output, lens) = if lens {
        model.forward_probed_lens(image, &probes)
    } else {
        (model.forward_probed(image, &probes), Vec::new())
    };
    let blocks = lens.len();
    let logits = output.logits.clone().inner(); // [1, C]
    // The predicted class chosen on the device: no readback before the backward pass.
    let chosen = match class {
        Some(class) => {
            let classes = logits.dims()[1];
            let mut mask = vec![0.0f32; classes];
            if let Some(m) = mask.get_mut(class) {
                *m = 1.0;
            }
            Tensor::<1>::from_floats(mask.as_slice(), &logits.device()).reshape([1, classes])
        }
        None => {
            let top = logits.clone().max_dim(1); // [1, 1]
            logits
                .clone()
                .equal(top.expand([1, logits.dims()[1]]))
                .float() // [1, C]
        }
    };
    let score = (output.logits * Tensor::from_inner(chosen)).sum(); // [1]
    let gradients = score.backward();
    let mut flat = vec![logits.flatten::<1>(0, 1)];
    flat.extend(lens.into_iter().map(|l| l.inner().flatten::<1>(0, 1)));
    for (attention, probe) in output.attention.into_iter().zip(&probes) {
        flat.push(attention.inner().flatten(0, 3));
        let gradient = probe
            .grad(&gradients)
            .unwrap_or_else(|| Tensor::zeros(shape, &device.clone().inner()));
        flat.push(gradient.flatten(0, 3));
    }
    let mut read = read_all_async(flat).await?.into_iter();
    let logits = read.next().unwrap_or_default();
    let lens: Vec<Vec<f32>> = read.by_ref().take(blocks).collect();
    let (mut layers, mut grads) = (Vec::new(), Vec::new());
    while let (Some(values), Some(gradient)) = (read.next(), read.next()) {
        layers.push(LayerAttention {
            heads,
            tokens,
            values,
        });
        grads.push(LayerAttention {
            heads,
            tokens,
            values: gradient,
        });
    }
    let relevance = Relevance {
        class: class.unwrap_or_else(|| argmax(&logits)),
        patches: gradient_relevance(&layers, &grads),
    };
    Ok((relevance, lens))
}

fn argmax(values: &[f32]) -> usize {
    values
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or(0, |(i, _)| i)
}

/// The explanations card's numbers for `image`: the relevance for `class` (the prediction
/// when `None`) and the logit lens, as probabilities, from one forward and one backward pass.
///
/// # Shapes
/// - image: `[1, channels, height, width]`, normalised pixels, on `model`'s (autodiff) device
pub async fn explain_async(
    model: &VisionTransformer,
    config: &VitConfig,
    image: Tensor<4>,
    class: Option<usize>,
) -> Result<Explanation, ReadbackError> {
    let (relevance, lens) = probe_async(model, config, image, class, true).await?;
    Ok(Explanation {
        class: relevance.class,
        relevance: relevance.patches,
        lens: lens.iter().map(|logits| probabilities(logits)).collect(),
    })
}
