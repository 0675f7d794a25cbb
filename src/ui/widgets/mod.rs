//! Building blocks that know nothing of the model or the run: charts, heat maps, the canvas
//! painting under them, the error banner, work started on first sight, the app's arrival in
//! parts, numbers as the page writes them, and downloads: files, pictures of charts and
//! figures of maps.

mod arrival;
mod chart;
mod error_banner;
mod export;
mod first_sight;
mod heat_canvas;
mod numbers;
pub mod paint;
mod sheet;
mod svg_picture;
mod upload;

pub use arrival::{Arrival, Later};
pub use chart::{LineChart, Series, WhenEmpty};
pub use error_banner::ErrorBanner;
pub use export::{Export, ExportButton};
pub use first_sight::on_first_sight;
pub use heat_canvas::{HeatCanvas, Palette};
pub use numbers::thousands;
pub use sheet::{Sheet, SheetButtons, Tile};
pub use svg_picture::{KeyEntry, key_of};
pub use upload::{on_file_chosen, read_file};
