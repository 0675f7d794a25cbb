//! A figure of small maps (every head's attention, the position-embedding similarities, a
//! timeline's snapshot) saved as one picture, and the numbers behind it as one CSV.
//!
//! The picture is painted from the numbers, not copied from the page: the same palettes as
//! the tiles on screen, at a size that reads in a slide, whatever the page's layout.

use leptos::prelude::*;

use super::{Palette, offer_download, offer_png, paint};

/// One map of a [`Sheet`].
#[derive(Debug, Clone, PartialEq)]
pub struct Tile {
    /// Written under the map and in the CSV's `map` column.
    pub label: String,
    /// Row-major, `grid × grid`.
    pub values: Vec<f32>,
    pub grid: usize,
    pub palette: Palette,
}

/// Maps laid out in rows of `columns`, under a title.
#[derive(Debug, Clone, PartialEq)]
pub struct Sheet {
    pub title: String,
    pub tiles: Vec<Tile>,
    pub columns: usize,
}

/// A tile's side in the picture, in pixels.
const TILE: u32 = 96;
/// Room for a tile's label under it.
const LABEL: u32 = 18;
const GAP: u32 = 10;
const MARGIN: u32 = 12;
/// Room for the title above the tiles.
const TITLE: u32 = 24;
const TITLE_FONT: &str = "bold 14px sans-serif";

impl Sheet {
    /// `map,row,column,value` per cell, rows and columns counted from 1.
    pub fn csv(&self) -> String {
        let mut csv = String::from("map,row,column,value\n");
        for tile in &self.tiles {
            let label = tile.label.replace(',', ";");
            let grid = tile.grid.max(1);
            for (i, value) in tile.values.iter().enumerate() {
                csv.push_str(&format!(
                    "{label},{},{},{value}\n",
                    i / grid + 1,
                    i % grid + 1
                ));
            }
        }
        csv
    }

    /// The picture's size in pixels: `columns` tiles a row, as many rows as it takes.
    fn size(&self) -> (u32, u32) {
        let count = u32::try_from(self.tiles.len()).unwrap_or(u32::MAX);
        let columns = u32::try_from(self.columns.max(1))
            .unwrap_or(u32::MAX)
            .min(count.max(1));
        let rows = count.div_ceil(columns).max(1);
        let span = |n: u32, cell: u32| {
            n.saturating_mul(cell)
                .saturating_add(n.saturating_sub(1).saturating_mul(GAP))
                .saturating_add(2 * MARGIN)
        };
        (
            span(columns, TILE),
            span(rows, TILE + LABEL).saturating_add(TITLE),
        )
    }

    /// The whole figure on a canvas of its own: title, then each map with its label under it.
    pub fn picture(&self) -> Option<web_sys::HtmlCanvasElement> {
        let (tiles_width, height) = self.size();
        let sheet = paint::new_canvas(1, 1)?;
        let ctx = paint::context(&sheet)?;
        ctx.set_font(TITLE_FONT);
        let title_width = ctx.measure_text(&self.title).ok()?.width().ceil() as u32;
        let width = tiles_width.max(title_width.saturating_add(2 * MARGIN));
        // Resizing clears the canvas and its context's state: the font is set again below.
        sheet.set_width(width);
        sheet.set_height(height);
        ctx.set_fill_style_str("#ffffff");
        ctx.fill_rect(0.0, 0.0, width as f64, height as f64);
        ctx.set_fill_style_str("#1d2230");
        ctx.set_font(TITLE_FONT);
        let _ = ctx.fill_text(&self.title, MARGIN as f64, (MARGIN + 12) as f64);
        ctx.set_font("11px sans-serif");
        let tile_canvas = paint::new_canvas(TILE, TILE)?;
        let columns = self.columns.max(1);
        for (i, tile) in self.tiles.iter().enumerate() {
            let (row, column) = ((i / columns) as f64, (i % columns) as f64);
            let x = MARGIN as f64 + column * (TILE + GAP) as f64;
            let y = (MARGIN + TITLE) as f64 + row * (TILE + LABEL + GAP) as f64;
            tile.palette.paint(&tile_canvas, &tile.values, tile.grid);
            ctx.draw_image_with_html_canvas_element(&tile_canvas, x, y)
                .ok()?;
            ctx.set_fill_style_str("#1d2230");
            let _ = ctx.fill_text_with_max_width(
                &tile.label,
                x,
                y + (TILE + LABEL - 4) as f64,
                TILE as f64,
            );
        }
        Some(sheet)
    }
}

/// "PNG" and "CSV" buttons for a figure of maps, taken when clicked (so that the figure is
/// built only then, not at every update of the maps). `name` names the files
/// (`vitlab-{name}.png`) and the buttons' test ids (`{name}-png`, `{name}-csv`).
#[component]
pub fn SheetButtons(
    #[prop(into)] sheet: Callback<(), Option<Sheet>>,
    #[prop(into)] name: String,
) -> impl IntoView {
    let (png_id, csv_id) = (format!("{name}-png"), format!("{name}-csv"));
    let (png_file, csv_file) = (format!("vitlab-{name}.png"), format!("vitlab-{name}.csv"));
    view! {
        <span class="export">
            <button class="small" data-testid=png_id title="the maps as one picture" on:click=move |_| {
                if let Some(picture) = sheet.run(()).and_then(|s| s.picture()) {
                    let _ = offer_png(&picture, &png_file);
                }
            }>"PNG"</button>
            <button class="small" data-testid=csv_id title="the numbers behind the maps" on:click=move |_| {
                if let Some(sheet) = sheet.run(()) {
                    let _ = offer_download(sheet.csv().as_bytes(), &csv_file);
                }
            }>"CSV"</button>
        </span>
    }
}
