//! The explaining worker (`role=explain`): gradient relevance and the logit lens for a
//! drawing, and the ViT against the CNN with patches hidden, on the backend the page draws on,
//! in a worker of its own so that its work stays off the drawing's path.

mod client;
#[cfg(feature = "gpu")]
mod worker;

pub use client::ExplainingWorker;
#[cfg(feature = "gpu")]
pub use worker::run_explaining_worker;
