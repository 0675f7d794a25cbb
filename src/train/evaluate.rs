//! Classifying a set in batches: the one evaluation loop of `vit eval`, `vit train` and the
//! training worker.

use burn::tensor::{Device, Int, Tensor};

use crate::data::{IMAGE_PIXELS, MnistSet, images_tensor};
use crate::model::Classifier;

/// Items `indices` of `set` classified by `model`, `batch_size` at a time: each batch's
/// indices and predictions, still on the device for the caller to read back (synchronously
/// natively, awaited in the browser). The one evaluation loop of `vit eval`, `vit train` and
/// the training worker.
pub fn classify_in_batches<'a>(
    model: &'a Classifier,
    set: &'a MnistSet,
    indices: &'a [usize],
    batch_size: usize,
    device: &'a Device,
) -> impl Iterator<Item = (&'a [usize], Tensor<1, Int>)> + 'a {
    indices.chunks(batch_size.max(1)).map(move |batch| {
        let images: Vec<&[u8]> = batch.iter().map(|&index| set.image(index)).collect();
        debug_assert!(images.iter().all(|image| image.len() == IMAGE_PIXELS));
        let logits = model.forward(images_tensor(&images, device)); // [B, C]
        (batch, predictions(logits)) // [B]
    })
}

/// Predicted class per row.
///
/// # Shapes
/// - logits: `[batch, classes]`
/// - output: `[batch]`
pub fn predictions(logits: Tensor<2>) -> Tensor<1, Int> {
    let [batch, _] = logits.dims();
    logits.argmax(1).reshape([batch])
}

/// How many rows predict their label.
///
/// # Shapes
/// - logits: `[batch, classes]`
/// - labels: `[batch]`
/// - output: `[1]`
pub fn count_correct(logits: Tensor<2>, labels: Tensor<1, Int>) -> Tensor<1, Int> {
    predictions(logits).equal(labels).int().sum()
}

/// Accuracy over a labelled set, with the confusion matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    pub examples: usize,
    pub correct: usize,
    /// `confusion[label][predicted]`
    pub confusion: Vec<Vec<usize>>,
}

impl Evaluation {
    pub fn new(classes: usize) -> Self {
        Self {
            examples: 0,
            correct: 0,
            confusion: vec![vec![0; classes]; classes],
        }
    }

    pub fn record(&mut self, labels: &[u8], predicted: &[i64]) {
        for (&label, &guess) in labels.iter().zip(predicted) {
            self.examples += 1;
            if label as i64 == guess {
                self.correct += 1;
            }
            self.confusion[label as usize][guess as usize] += 1;
        }
    }

    pub fn accuracy(&self) -> f64 {
        if self.examples == 0 {
            0.0
        } else {
            self.correct as f64 / self.examples as f64
        }
    }

    /// Accuracy for each true class.
    pub fn per_class_accuracy(&self) -> Vec<f64> {
        self.confusion
            .iter()
            .enumerate()
            .map(|(class, row)| {
                let total: usize = row.iter().sum();
                if total == 0 {
                    0.0
                } else {
                    row[class] as f64 / total as f64
                }
            })
            .collect()
    }
}
