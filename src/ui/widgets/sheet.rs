//! A figure of small maps (every head's attention, the position-embedding similarities, a
//! timeline's snapshot) saved as one picture, and the numbers behind it as one CSV.
//!
//! The picture is painted from the numbers, not copied from the page: the same palettes as
//! the tiles on screen, at a size that reads in a slide, whatever the page's layout.

use leptos::prelude::*;

use crate::analysis::csv;

use super::export::{Export, ExportButton};
use super::{Palette, paint};

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
    /// Each cell's value written on it (for small grids of counts, such as a confusion
    /// matrix); the tiles grow to fit.
    pub numbers: bool,
}

/// A tile's side in the picture, in pixels.
const TILE: u32 = 96;
/// A cell's side where the cells carry their numbers.
const NUMBERED_CELL: u32 = 40;
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
        csv::maps(
            self.tiles
                .iter()
                .map(|t| (t.label.as_str(), t.values.as_slice(), t.grid)),
        )
    }

    /// A tile's side in pixels: [`TILE`], or room for each cell's number.
    fn tile_side(&self) -> u32 {
        let grid = self.tiles.iter().map(|t| t.grid).max().unwrap_or(1);
        let numbered = u32::try_from(grid)
            .unwrap_or(u32::MAX)
            .saturating_mul(NUMBERED_CELL);
        if self.numbers {
            TILE.max(numbered)
        } else {
            TILE
        }
    }

    /// The picture's size in pixels: `columns` tiles a row, as many rows as it takes.
    fn size(&self) -> (u32, u32) {
        let tile = self.tile_side();
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
            span(columns, tile),
            span(rows, tile.saturating_add(LABEL)).saturating_add(TITLE),
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
        let side = self.tile_side();
        let tile_canvas = paint::new_canvas(side, side)?;
        let columns = self.columns.max(1);
        for (i, tile) in self.tiles.iter().enumerate() {
            let (row, column) = ((i / columns) as f64, (i % columns) as f64);
            let x = MARGIN as f64 + column * (side + GAP) as f64;
            let y = (MARGIN + TITLE) as f64 + row * (side + LABEL + GAP) as f64;
            tile.palette.paint(&tile_canvas, &tile.values, tile.grid);
            ctx.draw_image_with_html_canvas_element(&tile_canvas, x, y)
                .ok()?;
            if self.numbers {
                write_numbers(&ctx, tile, x, y, side as f64);
            }
            ctx.set_font("11px sans-serif");
            ctx.set_text_align("left");
            ctx.set_fill_style_str("#1d2230");
            let _ = ctx.fill_text_with_max_width(
                &tile.label,
                x,
                y + (side + LABEL - 4) as f64,
                side as f64,
            );
        }
        Some(sheet)
    }
}

/// Each cell's value on it, centred, white with a dark edge so that it reads on any colour.
fn write_numbers(ctx: &web_sys::CanvasRenderingContext2d, tile: &Tile, x: f64, y: f64, side: f64) {
    let grid = tile.grid.max(1);
    let cell = side / grid as f64;
    ctx.set_font("bold 13px sans-serif");
    ctx.set_text_align("center");
    ctx.set_line_width(3.0);
    // Round joins: mitred ones spike at the sharp corners of a 4.
    ctx.set_line_join("round");
    ctx.set_stroke_style_str("#1d2230");
    ctx.set_fill_style_str("#ffffff");
    for (i, value) in tile.values.iter().enumerate().take(grid * grid) {
        let text = if value.fract() == 0.0 {
            format!("{value:.0}")
        } else {
            format!("{value:.2}")
        };
        let (cx, cy) = (
            x + ((i % grid) as f64 + 0.5) * cell,
            y + ((i / grid) as f64 + 0.5) * cell + 4.5,
        );
        let _ = ctx.stroke_text(&text, cx, cy);
        let _ = ctx.fill_text(&text, cx, cy);
    }
}

/// "PNG" and "CSV" buttons for a figure of maps, taken when clicked (so that the figure is
/// built only then, not at every update of the maps). `name` names the files
/// (`vitlab-{name}.png`) and the buttons' test ids (`{name}-png`, `{name}-csv`).
#[component]
pub fn SheetButtons(
    #[prop(into)] sheet: Callback<(), Option<Sheet>>,
    #[prop(into)] name: String,
    /// The numbers in a form of their own, instead of the sheet's `map,row,column,value`.
    #[prop(optional, into)]
    csv: Option<Callback<(), Option<String>>>,
    /// Whether there is anything to save yet (the buttons are disabled until there is).
    #[prop(optional, into)]
    ready: Option<Signal<bool>>,
) -> impl IntoView {
    let ready = Signal::derive(move || ready.is_none_or(|ready| ready.get()));
    let make_png =
        Callback::new(move |()| sheet.run(()).and_then(|s| s.picture()).map(Export::Canvas));
    let make_csv = Callback::new(move |()| {
        let numbers = match csv {
            Some(own) => own.run(()),
            None => sheet.run(()).map(|s| s.csv()),
        };
        numbers.map(Export::text)
    });
    view! {
        <span class="export">
            <ExportButton label="PNG" testid=format!("{name}-png") file=format!("vitlab-{name}.png")
                title="the maps as one picture" ready=ready make=make_png />
            <ExportButton label="CSV" testid=format!("{name}-csv") file=format!("vitlab-{name}.csv")
                title="the numbers behind the maps" ready=ready make=make_csv />
        </span>
    }
}
