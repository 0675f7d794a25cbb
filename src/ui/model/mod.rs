//! The page's model: where it runs ([`ModelHost`]), the test digits it is shown, and the mean
//! attention distance measured over a batch of them.

mod batch_distance;
mod host;
mod test_digits;

pub use batch_distance::{DistanceError, distance_digits_of, test_batch_distance};
pub use host::{EngineSignal, HostError, ModelHost, browser_has_webgpu};
pub use test_digits::{ShownDigit, TestDigits, TestDigitsError};
