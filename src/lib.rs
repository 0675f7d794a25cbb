//! vitlab: a Vision Transformer that trains and explains itself in the browser.
//!
//! The pure parts (model, weights, data, training) know nothing of the browser and are
//! tested natively; `web` and `ui` are the browser boundary.

pub mod analysis;
pub mod data;
pub mod example_digit;
pub mod handwriting_store;
pub mod model;
pub mod place;
pub mod protocol;
pub mod rng;
pub mod run_record;
pub mod run_store;
pub mod run_view;
pub mod share;
pub mod shipped;
pub mod slice_mean;
pub mod tab_session;
pub mod train;
pub mod weights;

#[cfg(not(target_arch = "wasm32"))]
pub mod launch_count;
#[cfg(not(target_arch = "wasm32"))]
pub mod native;

#[cfg(all(target_arch = "wasm32", feature = "ui"))]
pub mod ui;
#[cfg(target_arch = "wasm32")]
pub mod web;
