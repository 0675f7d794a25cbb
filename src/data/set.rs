//! MNIST in memory: images and labels, and the batches a model takes (normalised as the seed's
//! transforms, augmented when training).

use burn::tensor::{Device, Int, Tensor, TensorData};

use super::Augmentation;
use crate::rng::SplitMix64;

/// MNIST images are 28×28.
pub const IMAGE_SIDE: usize = 28;
pub const IMAGE_PIXELS: usize = IMAGE_SIDE * IMAGE_SIDE;
/// The digits 0–9.
pub const NUM_CLASSES: usize = 10;
/// The seed's `transforms.Normalize((0.1307,), (0.3081,))`.
pub const MNIST_MEAN: f32 = 0.1307;
pub const MNIST_STD: f32 = 0.3081;

/// A grey level 0..=255 as the model sees it: scaled to [0, 1], then normalised.
pub fn normalize_pixel(pixel: u8) -> f32 {
    (pixel as f32 / 255.0 - MNIST_MEAN) / MNIST_STD
}

/// Grey-level images (784 pixels each) as the model's normalised input; the one way pixels
/// become model input, for training batches and drawings alike.
///
/// # Shapes
/// - output: `[images, 1, 28, 28]`
pub fn images_tensor<I: AsRef<[u8]>>(images: &[I], device: &Device) -> Tensor<4> {
    let pixels: Vec<f32> = images
        .iter()
        .flat_map(|image| image.as_ref().iter().copied().map(normalize_pixel))
        .collect();
    Tensor::from_data(
        TensorData::new(pixels, [images.len(), 1, IMAGE_SIDE, IMAGE_SIDE]),
        device,
    )
}

/// Images (row-major grey levels, [`IMAGE_PIXELS`] each) and their digit labels.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MnistSet {
    pub images: Vec<u8>,
    pub labels: Vec<u8>,
}

/// A batch ready for the model.
#[derive(Debug, Clone)]
pub struct Batch {
    /// `[batch, 1, 28, 28]`, normalised.
    pub images: Tensor<4>,
    /// `[batch]`
    pub labels: Tensor<1, Int>,
}

impl MnistSet {
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    pub fn image(&self, index: usize) -> &[u8] {
        &self.images[index * IMAGE_PIXELS..(index + 1) * IMAGE_PIXELS]
    }

    /// Appends another set, as chunks arrive.
    pub fn extend(&mut self, other: &MnistSet) {
        self.images.extend_from_slice(&other.images);
        self.labels.extend_from_slice(&other.labels);
    }

    /// Items `range` as a new set.
    pub fn slice(&self, range: std::ops::Range<usize>) -> MnistSet {
        MnistSet {
            images: self.images[range.start * IMAGE_PIXELS..range.end * IMAGE_PIXELS].to_vec(),
            labels: self.labels[range].to_vec(),
        }
    }

    /// The given items as tensors on `device`.
    pub fn batch(&self, indices: &[usize], device: &Device) -> Batch {
        let images: Vec<&[u8]> = indices.iter().map(|&index| self.image(index)).collect();
        self.labelled(indices, images_tensor(&images, device))
    }

    /// The given items, each randomly moved by `augmentation`, as tensors on `device`.
    pub fn augmented_batch(
        &self,
        indices: &[usize],
        augmentation: &Augmentation,
        rng: &mut SplitMix64,
        device: &Device,
    ) -> Batch {
        let images: Vec<_> = indices
            .iter()
            .map(|&index| augmentation.apply(self.image(index), rng))
            .collect();
        self.labelled(indices, images_tensor(&images, device))
    }

    /// `images` (the given items, in order) with their labels.
    fn labelled(&self, indices: &[usize], images: Tensor<4>) -> Batch {
        let labels: Vec<i64> = indices
            .iter()
            .map(|&index| self.labels[index] as i64)
            .collect();
        let labels = Tensor::from_data(TensorData::new(labels, [indices.len()]), &images.device());
        Batch { images, labels }
    }
}
