//! Building blocks that know nothing of the model or the run: charts, heat maps, the canvas
//! painting under them, the error banner, and downloads.

mod chart;
mod download;
mod error_banner;
mod heat_canvas;
pub mod paint;

pub use chart::{LineChart, Series};
pub use download::{offer_download, offer_png};
pub use error_banner::ErrorBanner;
pub use heat_canvas::{HeatCanvas, Palette};
