//! A grid of numbers as a small coloured canvas, with a description for screen readers.

use leptos::html::Canvas;
use leptos::prelude::*;

use super::paint;

/// How a [`HeatCanvas`] turns numbers into colour.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Palette {
    /// The colour scale, stretched over the values' own range.
    Heat,
    /// The colour scale over a fixed range.
    HeatFixed(f32, f32),
    /// Blue–white–red around zero.
    Diverging,
    /// Grey levels 0..=255.
    Grey,
}

impl Palette {
    /// Fills `canvas` with the `grid × grid` `values` in this palette; an empty map as a
    /// neutral tile, which keeps a layout readable before there is anything to show.
    pub fn paint(self, canvas: &web_sys::HtmlCanvasElement, values: &[f32], grid: usize) {
        if values.is_empty() {
            if let Some(ctx) = paint::context(canvas) {
                ctx.set_fill_style_str("#e4e6ee");
                ctx.fill_rect(0.0, 0.0, canvas.width() as f64, canvas.height() as f64);
            }
            return;
        }
        match self {
            Palette::Heat => paint::heatmap(canvas, values, grid, paint::range(values), 1.0),
            Palette::HeatFixed(lo, hi) => paint::heatmap(canvas, values, grid, (lo, hi), 1.0),
            Palette::Diverging => paint::diverging_image(canvas, values, grid),
            Palette::Grey => {
                let pixels: Vec<u8> = values.iter().map(|v| v.clamp(0.0, 255.0) as u8).collect();
                paint::grey_image(canvas, &pixels, grid)
            }
        }
    }
}

/// What a screen reader says of a tile: its values' range and where the largest is.
fn describe(values: &[f32], grid: usize, palette: Palette, title: &str) -> String {
    let lead = if title.is_empty() {
        String::new()
    } else {
        format!("{title}: ")
    };
    if values.is_empty() {
        return format!("{lead}nothing yet");
    }
    if palette == Palette::Grey {
        let ink = values.iter().filter(|&&v| v > 127.0).count();
        return format!("{lead}a {grid}×{grid} grey image, {ink} of its pixels inked");
    }
    let (lo, hi) = paint::range(values);
    let top = values
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or(0, |(i, _)| i);
    format!(
        "{lead}a {grid}×{grid} map from {lo:.3} to {hi:.3}, largest at row {}, column {}",
        top / grid.max(1) + 1,
        top % grid.max(1) + 1
    )
}

/// A canvas showing a `grid × grid` array, repainted whenever `values` changes.
#[component]
pub fn HeatCanvas(
    /// Row-major values, `grid × grid` of them.
    #[prop(into)]
    values: Signal<Vec<f32>>,
    /// Cells per side.
    grid: usize,
    /// Canvas side in pixels.
    #[prop(default = 56)]
    size: u32,
    #[prop(default = Palette::Heat)] palette: Palette,
    #[prop(optional, into)] title: String,
) -> impl IntoView {
    let canvas_ref = NodeRef::<Canvas>::new();
    Effect::new(move |_| {
        let values = values.get();
        if let Some(canvas) = canvas_ref.get() {
            palette.paint(&canvas, &values, grid);
        }
    });
    let named = title.clone();
    let label = move || describe(&values.get(), grid, palette, &named);
    view! { <canvas node_ref=canvas_ref width=size height=size class="heat" title=title role="img" aria-label=label></canvas> }
}
