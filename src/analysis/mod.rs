//! What a drawing becomes: the canvas as an MNIST digit (`preprocess`), one forward pass for
//! the probabilities and every attention map (`inference`), and the paper's Fig. 7 analyses
//! of them (`insight`: attention rollout, mean attention distance). Pure: no browser types.

pub mod data_scaling;
pub mod explanation;
pub mod inference;
pub mod insight;
mod map_choice;
pub mod occlusion;
pub mod preprocess;
#[cfg(feature = "train")]
pub mod relevance;
pub mod timeline;

pub use map_choice::MapChoice;
