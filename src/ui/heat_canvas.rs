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
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        if values.is_empty() {
            // Nothing to show yet: a neutral tile keeps the layout readable.
            if let Some(ctx) = paint::context(&canvas) {
                ctx.set_fill_style_str("#e4e6ee");
                ctx.fill_rect(0.0, 0.0, canvas.width() as f64, canvas.height() as f64);
            }
            return;
        }
        match palette {
            Palette::Heat => paint::heatmap(&canvas, &values, grid, paint::range(&values), 1.0),
            Palette::HeatFixed(lo, hi) => paint::heatmap(&canvas, &values, grid, (lo, hi), 1.0),
            Palette::Diverging => paint::diverging_image(&canvas, &values, grid),
            Palette::Grey => {
                let pixels: Vec<u8> = values.iter().map(|v| v.clamp(0.0, 255.0) as u8).collect();
                paint::grey_image(&canvas, &pixels, grid)
            }
        }
    });
    view! { <canvas node_ref=canvas_ref width=size height=size class="heat" title=title></canvas> }
}
