//! A person's digits trained on beside MNIST's (fine-tuning on their handwriting): the digits
//! travel in the plan, so that a run saved at any step continues on its own, in this page or
//! with `vit train --resume-from`.

use serde::{Deserialize, Serialize};

use crate::data::{IMAGE_PIXELS, MnistSet, PersonalSet};

/// Why a mix cannot be trained on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MixError {
    #[error("a mix needs at least one of your digits, and at most {MAX_MIX_DIGITS}")]
    Digits,
    #[error("{pixels} grey levels for {digits} digits of 28×28")]
    Pixels { pixels: usize, digits: usize },
    #[error("digit {index} is labelled {label}, not 0 to 9")]
    Label { index: usize, label: u8 },
    #[error("each digit is shown 1 to {MAX_COPIES} times an epoch, not {0}")]
    Copies(usize),
    #[error(
        "{0} images of yours an epoch (copies counted) is more than the {MAX_MIX_IMAGES} a mix may take"
    )]
    Images(usize),
}

/// Digits a fine-tuning plan may carry: a set drawn by hand is far smaller, and each is ~2 kB
/// of a checkpoint's header.
pub const MAX_MIX_DIGITS: usize = 1_000;
/// Times a digit may come back in an epoch: more only learns those few strokes by heart.
pub const MAX_COPIES: usize = 100;
/// A person's images an epoch, copies counted: as many as MNIST's training split (47 MB of
/// pixels held while the run trains).
pub const MAX_MIX_IMAGES: usize = 60_000;

/// The digits a run trains on before MNIST's, each `copies` times an epoch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonalMix {
    /// 28×28 grey levels, one digit after another.
    pub pixels: Vec<u8>,
    pub labels: Vec<u8>,
    pub copies: usize,
}

impl PersonalMix {
    pub fn new(set: &PersonalSet, copies: usize) -> Self {
        Self {
            pixels: set.images.concat(),
            labels: set.labels.clone(),
            copies,
        }
    }

    pub fn digits(&self) -> usize {
        self.labels.len()
    }

    /// Images an epoch takes of them: at most [`MAX_MIX_IMAGES`] once
    /// [`PersonalMix::validate`] holds.
    pub fn images(&self) -> usize {
        self.digits().saturating_mul(self.copies)
    }

    pub fn validate(&self) -> Result<(), MixError> {
        let digits = self.digits();
        if digits == 0 || digits > MAX_MIX_DIGITS {
            return Err(MixError::Digits);
        }
        if digits.checked_mul(IMAGE_PIXELS) != Some(self.pixels.len()) {
            return Err(MixError::Pixels {
                pixels: self.pixels.len(),
                digits,
            });
        }
        if let Some((index, &label)) = self.labels.iter().enumerate().find(|(_, l)| **l > 9) {
            return Err(MixError::Label { index, label });
        }
        if !(1..=MAX_COPIES).contains(&self.copies) {
            return Err(MixError::Copies(self.copies));
        }
        if self.images() > MAX_MIX_IMAGES {
            return Err(MixError::Images(self.images()));
        }
        Ok(())
    }

    /// Every copy, one after another, as the training code reads MNIST.
    pub fn to_set(&self) -> MnistSet {
        MnistSet {
            images: self.pixels.repeat(self.copies),
            labels: self.labels.repeat(self.copies),
        }
    }
}
