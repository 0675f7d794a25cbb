//! The training worker, in a folder: its page side (`client`, on top of `web::link`) and,
//! inside the worker, one async loop (`worker`) that owns the run through a `Runner` and
//! drains an inbox between steps.
//!
//! `inbox` holds what waits, `commands` answers the page, `stepping` trains, evaluates and
//! saves, `run` is the run in progress and `to_page` what the worker says; `loader` fetches
//! the data. What the page and the worker say is `crate::protocol::trainer`.

mod client;
#[cfg(feature = "train")]
mod commands;
#[cfg(feature = "train")]
mod inbox;
#[cfg(feature = "train")]
mod loader;
#[cfg(feature = "train")]
mod run;
#[cfg(feature = "train")]
mod runner;
#[cfg(feature = "train")]
mod stepping;
#[cfg(feature = "train")]
mod to_page;
#[cfg(feature = "train")]
mod worker;

pub use client::{TrainerLost, TrainerWorker};
#[cfg(feature = "train")]
pub use worker::run_training_worker;
