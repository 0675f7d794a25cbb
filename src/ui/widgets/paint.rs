//! Drawing numbers onto canvases: colour scale, heatmap grids, grey images.

use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, ContextAttributes2d, HtmlCanvasElement, ImageData};

/// A perceptually ordered dark-blue → teal → yellow scale (viridis-like), `t` in [0, 1].
pub fn colour(t: f32) -> [u8; 3] {
    const STOPS: [[f32; 3]; 5] = [
        [68.0, 1.0, 84.0],
        [59.0, 82.0, 139.0],
        [33.0, 145.0, 140.0],
        [94.0, 201.0, 98.0],
        [253.0, 231.0, 37.0],
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let scaled = t * (STOPS.len() - 1) as f32;
    let i = (scaled.floor() as usize).min(STOPS.len() - 2);
    let f = scaled - i as f32;
    let mix = |k: usize| (STOPS[i][k] + (STOPS[i + 1][k] - STOPS[i][k]) * f).round() as u8;
    [mix(0), mix(1), mix(2)]
}

pub fn context(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas.get_context("2d").ok()??.dyn_into().ok()
}

/// The context of a canvas whose pixels the page reads back (the pad, at every drawing):
/// kept in memory rather than on the GPU (`willReadFrequently`), so a read is a copy, not a GPU
/// readback. Every use of such a canvas must go through here: the first `getContext` fixes it.
pub fn read_back_context(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    let options = ContextAttributes2d::new();
    options.set_will_read_frequently(true);
    canvas
        .get_context_with_context_options("2d", &options)
        .ok()??
        .dyn_into()
        .ok()
}

/// `(min, max)` of the values, with a non-empty range.
pub fn range(values: &[f32]) -> (f32, f32) {
    let min = values.iter().copied().fold(f32::INFINITY, f32::min);
    let max = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if !min.is_finite() || !max.is_finite() {
        (0.0, 1.0)
    } else if max - min < 1e-12 {
        (min, min + 1e-12)
    } else {
        (min, max)
    }
}

/// Fills the canvas with a `grid × grid` heatmap of `values` scaled to `(lo, hi)`.
pub fn heatmap(
    canvas: &HtmlCanvasElement,
    values: &[f32],
    grid: usize,
    (lo, hi): (f32, f32),
    alpha: f32,
) {
    let Some(ctx) = context(canvas) else { return };
    let opacity = (alpha.clamp(0.0, 1.0) * 255.0).round() as u8;
    put_cells(&ctx, canvas, grid, |index| match values.get(index) {
        Some(value) => {
            let [r, g, b] = colour((value - lo) / (hi - lo));
            [r, g, b, opacity]
        }
        None => [0; 4],
    });
}

/// Fills the whole canvas with a `grid × grid` picture, each of its pixels the colour of the
/// cell under it, in one `putImageData`: a `fillRect` per cell (and a colour string for each)
/// made the repaint of a drawing's 50 maps ~2,500 calls into the browser, most of each
/// reading's task on the page's thread (about 45 ms of 60 on a phone's CPU).
fn put_cells(
    ctx: &CanvasRenderingContext2d,
    canvas: &HtmlCanvasElement,
    grid: usize,
    cell: impl Fn(usize) -> [u8; 4],
) {
    let (width, height) = (canvas.width() as usize, canvas.height() as usize);
    let Some(cells) = grid.checked_mul(grid) else {
        return;
    };
    let Some(bytes) = width.checked_mul(height).and_then(|n| n.checked_mul(4)) else {
        return;
    };
    if cells == 0 || bytes == 0 {
        return;
    }
    let colours: Vec<[u8; 4]> = (0..cells).map(cell).collect();
    let mut rgba = vec![0u8; bytes];
    for (y, row) in rgba.chunks_exact_mut(width * 4).enumerate() {
        let row_colours = &colours[(y * grid / height) * grid..][..grid];
        for (x, pixel) in row.chunks_exact_mut(4).enumerate() {
            pixel.copy_from_slice(&row_colours[x * grid / width]);
        }
    }
    if let Ok(image) =
        ImageData::new_with_u8_clamped_array_and_sh(Clamped(&rgba), width as u32, height as u32)
    {
        let _ = ctx.put_image_data(&image, 0.0, 0.0);
    }
}

/// Puts a grey image (`side × side`, 0 = black) on the canvas, scaled to fill it.
pub fn grey_image(canvas: &HtmlCanvasElement, pixels: &[u8], side: usize) {
    if let Some(ctx) = context(canvas) {
        grey_image_on(&ctx, canvas, pixels, side);
    }
}

/// [`grey_image`] through a context the caller holds (a [`read_back_context`]).
pub fn grey_image_on(
    ctx: &CanvasRenderingContext2d,
    canvas: &HtmlCanvasElement,
    pixels: &[u8],
    side: usize,
) {
    put_cells(ctx, canvas, side, |index| match pixels.get(index) {
        Some(&grey) => [grey, grey, grey, 255],
        None => [0; 4],
    });
}

/// The colour of `t` in -1..=1: blue (negative) to white to red (positive).
pub fn diverging(t: f32) -> [u8; 3] {
    let t = t.clamp(-1.0, 1.0);
    let fade = (255.0 * (1.0 - t.abs())) as u8;
    if t >= 0.0 {
        [255, fade, fade]
    } else {
        [fade, fade, 255]
    }
}

/// [`diverging`] as a CSS colour.
pub fn diverging_fill(t: f32) -> String {
    let [r, g, b] = diverging(t);
    format!("rgb({r},{g},{b})")
}

/// A signed image (e.g. a filter) as blue (negative) to white to red (positive).
pub fn diverging_image(canvas: &HtmlCanvasElement, values: &[f32], side: usize) {
    let Some(ctx) = context(canvas) else { return };
    let scale = values.iter().fold(1e-12f32, |m, v| m.max(v.abs()));
    put_cells(&ctx, canvas, side, |index| match values.get(index) {
        Some(value) => {
            let [r, g, b] = diverging(value / scale);
            [r, g, b, 255]
        }
        None => [0; 4],
    });
}

/// The canvas's pixels as a grey raster, ink taken from the red channel (a canvas drawn through
/// [`read_back_context`]).
pub fn read_grey(canvas: &HtmlCanvasElement) -> Option<crate::analysis::preprocess::Raster> {
    let ctx = read_back_context(canvas)?;
    let (w, h) = (canvas.width(), canvas.height());
    let data: Clamped<Vec<u8>> = ctx
        .get_image_data(0.0, 0.0, w as f64, h as f64)
        .ok()?
        .data();
    Some(crate::analysis::preprocess::Raster {
        width: w as usize,
        height: h as usize,
        pixels: data.0.chunks_exact(4).map(|rgba| rgba[0]).collect(),
    })
}

/// A horizontal colour-scale strip for legends.
pub fn legend(canvas: &HtmlCanvasElement) {
    let Some(ctx) = context(canvas) else { return };
    let (w, h) = (canvas.width(), canvas.height());
    let mut data = Vec::with_capacity((w * h * 4) as usize);
    for _y in 0..h {
        for x in 0..w {
            let [r, g, b] = colour(x as f32 / (w.max(2) - 1) as f32);
            data.extend_from_slice(&[r, g, b, 255]);
        }
    }
    if let Ok(image) = ImageData::new_with_u8_clamped_array_and_sh(Clamped(&data), w, h) {
        let _ = ctx.put_image_data(&image, 0.0, 0.0);
    }
}

/// A new canvas the size of `under` with `under` and then `over` drawn on it (a heatmap over
/// its image, as one picture to save); `None` where no canvas can be made.
pub fn stacked(under: &HtmlCanvasElement, over: &HtmlCanvasElement) -> Option<HtmlCanvasElement> {
    let canvas = new_canvas(under.width(), under.height())?;
    let ctx = context(&canvas)?;
    ctx.draw_image_with_html_canvas_element(under, 0.0, 0.0)
        .ok()?;
    ctx.draw_image_with_html_canvas_element(over, 0.0, 0.0)
        .ok()?;
    Some(canvas)
}

/// A canvas of its own, not in the page, `width × height` pixels; `None` where the page
/// cannot make one.
pub fn new_canvas(width: u32, height: u32) -> Option<HtmlCanvasElement> {
    let canvas: HtmlCanvasElement = web_sys::window()?
        .document()?
        .create_element("canvas")
        .ok()?
        .dyn_into()
        .ok()?;
    canvas.set_width(width);
    canvas.set_height(height);
    Some(canvas)
}

/// The cell of a `grid × grid` split of `canvas` under the pointer of `event`, row-major;
/// `None` off the canvas.
pub fn cell_at(
    canvas: &HtmlCanvasElement,
    event: &web_sys::MouseEvent,
    grid: usize,
) -> Option<usize> {
    let rect = canvas.get_bounding_client_rect();
    let x = (event.client_x() as f64 - rect.left()) / rect.width().max(1.0);
    let y = (event.client_y() as f64 - rect.top()) / rect.height().max(1.0);
    let inside = (0.0..1.0).contains(&x) && (0.0..1.0).contains(&y);
    inside.then(|| (y * grid as f64) as usize * grid + (x * grid as f64) as usize)
}

/// A signed `rows × cols` matrix (row-major) as blue (negative) to white to red (positive),
/// scaled by its largest magnitude, each cell stretched to fill the canvas.
pub fn diverging_matrix(canvas: &HtmlCanvasElement, values: &[f32], rows: usize, cols: usize) {
    let Some(ctx) = context(canvas) else { return };
    let scale = values.iter().fold(1e-12f32, |m, v| m.max(v.abs()));
    let (w, h) = (canvas.width() as f64, canvas.height() as f64);
    ctx.clear_rect(0.0, 0.0, w, h);
    let (cw, ch) = (w / cols.max(1) as f64, h / rows.max(1) as f64);
    for (index, v) in values.iter().enumerate().take(rows * cols) {
        ctx.set_fill_style_str(&diverging_fill(v / scale));
        let (row, col) = ((index / cols) as f64, (index % cols) as f64);
        ctx.fill_rect(col * cw, row * ch, cw + 0.5, ch + 0.5);
    }
}

/// Lines of a `grid × grid` split over the canvas, and the outline of cell `marked` (row-major)
/// if any: the patches a ViT cuts its input into, and the one picked.
pub fn patch_grid(canvas: &HtmlCanvasElement, grid: usize, marked: Option<usize>) {
    let Some(ctx) = context(canvas) else { return };
    let (w, h) = (canvas.width() as f64, canvas.height() as f64);
    let (cw, ch) = (w / grid.max(1) as f64, h / grid.max(1) as f64);
    ctx.set_stroke_style_str("rgba(255, 200, 60, 0.7)");
    ctx.set_line_width(1.0);
    for i in 1..grid {
        ctx.begin_path();
        ctx.move_to(i as f64 * cw, 0.0);
        ctx.line_to(i as f64 * cw, h);
        ctx.move_to(0.0, i as f64 * ch);
        ctx.line_to(w, i as f64 * ch);
        ctx.stroke();
    }
    if let Some(cell) = marked.filter(|&c| c < grid * grid) {
        ctx.set_stroke_style_str("#ff7a1a");
        ctx.set_line_width(3.0);
        let (row, col) = ((cell / grid) as f64, (cell % grid) as f64);
        ctx.stroke_rect(col * cw + 1.5, row * ch + 1.5, cw - 3.0, ch - 3.0);
    }
}
