//! A drawing to the 28×28 image the model sees, made the way MNIST's digits were made:
//! crop to the ink, scale to fit 20×20 keeping the aspect ratio (anti-aliased by area
//! averaging), then place in 28×28 so that the centre of mass sits at the centre.

use crate::data::{IMAGE_PIXELS, IMAGE_SIDE};

/// The box MNIST fits each digit into.
pub const FIT_SIDE: usize = 20;

/// A grey raster: 0 is background, 255 full ink.
#[derive(Debug, Clone, PartialEq)]
pub struct Raster {
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<u8>,
}

impl Raster {
    pub fn new(width: usize, height: usize) -> Self {
        Self {
            width,
            height,
            pixels: vec![0; width * height],
        }
    }

    fn at(&self, x: usize, y: usize) -> f32 {
        self.pixels[y * self.width + x] as f32
    }

    /// The smallest box holding every inked pixel: `(x0, y0, x1, y1)`, exclusive ends.
    pub fn ink_bounds(&self) -> Option<(usize, usize, usize, usize)> {
        let mut bounds: Option<(usize, usize, usize, usize)> = None;
        for y in 0..self.height {
            for x in 0..self.width {
                if self.pixels[y * self.width + x] > 0 {
                    bounds = Some(match bounds {
                        None => (x, y, x + 1, y + 1),
                        Some((x0, y0, x1, y1)) => {
                            (x0.min(x), y0.min(y), x1.max(x + 1), y1.max(y + 1))
                        }
                    });
                }
            }
        }
        bounds
    }
}

/// The MNIST-style 28×28 image of a drawing, or `None` when nothing is drawn.
pub fn to_mnist(raster: &Raster) -> Option<[u8; IMAGE_PIXELS]> {
    let (x0, y0, x1, y1) = raster.ink_bounds()?;
    let (width, height) = ((x1 - x0) as f32, (y1 - y0) as f32);
    let scale = FIT_SIDE as f32 / width.max(height);
    let (out_w, out_h) = (
        ((width * scale).round() as usize).clamp(1, FIT_SIDE),
        ((height * scale).round() as usize).clamp(1, FIT_SIDE),
    );
    let fitted = resample_area(raster, (x0, y0, x1, y1), out_w, out_h);

    // Centre of mass of the fitted digit, moved to the centre of the 28×28 frame.
    let (mut mass, mut cx, mut cy) = (0.0f32, 0.0f32, 0.0f32);
    for y in 0..out_h {
        for x in 0..out_w {
            let m = fitted[y * out_w + x];
            mass += m;
            cx += m * (x as f32 + 0.5);
            cy += m * (y as f32 + 0.5);
        }
    }
    if mass <= 0.0 {
        return None;
    }
    // Clamped so that a lopsided digit is shifted as far as it goes without losing ink.
    let centre = IMAGE_SIDE as f32 / 2.0;
    let offset = |com: f32, extent: usize| {
        ((centre - com).round() as isize).clamp(0, (IMAGE_SIDE - extent) as isize)
    };
    let offset_x = offset(cx / mass, out_w);
    let offset_y = offset(cy / mass, out_h);

    let mut image = [0u8; IMAGE_PIXELS];
    for y in 0..out_h {
        for x in 0..out_w {
            let (tx, ty) = (x as isize + offset_x, y as isize + offset_y);
            if (0..IMAGE_SIDE as isize).contains(&tx) && (0..IMAGE_SIDE as isize).contains(&ty) {
                let value = fitted[y * out_w + x].round().clamp(0.0, 255.0) as u8;
                image[ty as usize * IMAGE_SIDE + tx as usize] = value;
            }
        }
    }
    Some(image)
}

/// Box `(x0, y0, x1, y1)` of `raster` scaled to `out_w × out_h`, each output pixel the mean
/// of the source area it covers (fractional pixels weighted by coverage).
fn resample_area(
    raster: &Raster,
    (x0, y0, x1, y1): (usize, usize, usize, usize),
    out_w: usize,
    out_h: usize,
) -> Vec<f32> {
    let step_x = (x1 - x0) as f32 / out_w as f32;
    let step_y = (y1 - y0) as f32 / out_h as f32;
    let mut out = vec![0.0; out_w * out_h];
    for oy in 0..out_h {
        let (sy0, sy1) = (
            y0 as f32 + oy as f32 * step_y,
            y0 as f32 + (oy + 1) as f32 * step_y,
        );
        for ox in 0..out_w {
            let (sx0, sx1) = (
                x0 as f32 + ox as f32 * step_x,
                x0 as f32 + (ox + 1) as f32 * step_x,
            );
            let (mut sum, mut area) = (0.0, 0.0);
            for y in sy0.floor() as usize..(sy1.ceil() as usize).min(raster.height) {
                let cover_y = (sy1.min(y as f32 + 1.0) - sy0.max(y as f32)).max(0.0);
                for x in sx0.floor() as usize..(sx1.ceil() as usize).min(raster.width) {
                    let cover_x = (sx1.min(x as f32 + 1.0) - sx0.max(x as f32)).max(0.0);
                    sum += raster.at(x, y) * cover_x * cover_y;
                    area += cover_x * cover_y;
                }
            }
            out[oy * out_w + ox] = if area > 0.0 { sum / area } else { 0.0 };
        }
    }
    out
}
