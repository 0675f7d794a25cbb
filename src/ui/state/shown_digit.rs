//! A test digit put in the draw panel instead of a drawing.

use crate::data::MnistSet;
use crate::web::drawing::TestDigit;

/// A test digit put in the draw panel: the model is given exactly this 28×28 image.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownDigit {
    pub image: Vec<u8>,
    pub label: u8,
    /// Where it came from, for the caption.
    pub origin: String,
}

impl ShownDigit {
    /// Digit `index` of a test set held here (the browser tests').
    pub fn of_test_set(set: &MnistSet, index: usize) -> Self {
        Self {
            image: set.image(index).to_vec(),
            label: set.labels[index],
            origin: format!("test digit #{index}"),
        }
    }

    /// A test digit as a drawing worker sent it.
    pub fn of_test_digit(digit: TestDigit) -> Self {
        Self {
            origin: format!("test digit #{}", digit.index),
            image: digit.image,
            label: digit.label,
        }
    }
}
