//! What a drawing becomes: the canvas as an MNIST digit (`preprocess`), one forward pass for
//! the probabilities and every attention map (`inference`), the paper's Fig. 7 analyses of
//! them (`insight`: attention rollout, mean attention distance), and what the page shows of it
//! (`reading`). Pure: no browser types.

pub mod ablation;
pub mod csv;
pub mod data_scaling;
pub mod explanation;
pub mod inference;
pub mod insight;
mod map_choice;
pub mod occlusion;
pub mod preprocess;
pub mod reading;
#[cfg(feature = "train")]
pub mod relevance;
pub mod story;
pub mod timeline;

pub use map_choice::MapChoice;
