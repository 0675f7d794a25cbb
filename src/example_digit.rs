//! The digit the page shows on a first look, so that it opens already at work (as Transformer
//! Explainer opens on an example sentence): a three, in one stroke, in the pad's own pixels;
//! how to tell the pad's strokes are still (a part of) it, which the person's first touch then
//! replaces; and its image as the pad's pen inks it, for a place that reads it without a pad.

use crate::analysis::preprocess::{Raster, to_mnist};
use crate::data::IMAGE_PIXELS;

/// The digit it is, which the shipped model reads it as.
pub const EXAMPLE_LABEL: u8 = 3;

/// Its strokes' corners, as fractions of the pad's side (x right, y down).
const CORNERS: &[&[(f64, f64)]] = &[&[
    (0.33, 0.27),
    (0.42, 0.2),
    (0.54, 0.19),
    (0.63, 0.23),
    (0.66, 0.31),
    (0.62, 0.39),
    (0.51, 0.46),
    (0.45, 0.47),
    (0.55, 0.48),
    (0.64, 0.53),
    (0.68, 0.62),
    (0.65, 0.72),
    (0.56, 0.79),
    (0.44, 0.81),
    (0.33, 0.76),
]];

/// How far apart its points are, in the pad's pixels: a pen's pace, each point a move.
const STEP: f64 = 9.0;

/// Its strokes on a pad `side` pixels square: the corners with points every [`STEP`] pixels
/// between them, as a pen moving along them would give.
pub fn example_strokes(side: f64) -> Vec<Vec<(f64, f64)>> {
    CORNERS
        .iter()
        .map(|corners| {
            let at = |&(x, y): &(f64, f64)| (x * side, y * side);
            let mut stroke = Vec::new();
            for pair in corners.windows(2) {
                let (from, to) = (at(&pair[0]), at(&pair[1]));
                let length = (to.0 - from.0).hypot(to.1 - from.1);
                let steps = (length / STEP).ceil().max(1.0) as usize;
                for step in 0..steps {
                    let t = step as f64 / steps as f64;
                    stroke.push((from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t));
                }
            }
            if let Some(last) = corners.last() {
                stroke.push(at(last));
            }
            stroke
        })
        .collect()
}

/// Whether `strokes` are the example, or the part of it drawn so far: what a person draws is
/// never exactly it.
pub fn is_example(strokes: &[Vec<(f64, f64)>], side: f64) -> bool {
    let example = example_strokes(side);
    !strokes.is_empty()
        && strokes.len() <= example.len()
        && strokes
            .iter()
            .zip(&example)
            .all(|(stroke, whole)| !stroke.is_empty() && whole.starts_with(stroke))
}

/// The page's drawing pad: its side in canvas pixels, ten times MNIST's 28.
pub const PAD_SIDE: u32 = 280;

/// The pad's pen: a round nib this wide, in the pad's pixels (on 280, about two MNIST pixels
/// once a digit is fitted to 20×20).
pub const PEN_WIDTH: f64 = 20.0;

/// `strokes` inked with the pad's round pen on a `side`-pixel square pad, as the pad's canvas
/// inks them (without its anti-aliasing): every pixel whose centre is within half a pen's
/// width of a stroke. Each segment visits only the pixels of its own box.
pub fn inked(strokes: &[Vec<(f64, f64)>], side: usize) -> Raster {
    let mut raster = Raster::new(side, side);
    let radius = PEN_WIDTH / 2.0;
    let within = |(px, py): (f64, f64), (ax, ay): (f64, f64), (bx, by): (f64, f64)| {
        let (dx, dy) = (bx - ax, by - ay);
        let length = dx * dx + dy * dy;
        let t = match length == 0.0 {
            true => 0.0,
            false => (((px - ax) * dx + (py - ay) * dy) / length).clamp(0.0, 1.0),
        };
        (px - ax - t * dx).hypot(py - ay - t * dy) <= radius
    };
    // A pixel of the pad holding `v` (clamped: a point off the pad inks its edge's box only).
    let pixel = |v: f64| (v.max(0.0) as usize).min(side);
    for stroke in strokes {
        let segments = stroke.windows(2).map(|pair| (pair[0], pair[1])).chain(
            stroke
                .first()
                .filter(|_| stroke.len() == 1)
                .map(|&p| (p, p)),
        );
        for (a, b) in segments {
            let (x0, x1) = (
                pixel(a.0.min(b.0) - radius),
                pixel(a.0.max(b.0) + radius + 1.0),
            );
            let (y0, y1) = (
                pixel(a.1.min(b.1) - radius),
                pixel(a.1.max(b.1) + radius + 1.0),
            );
            for y in y0..y1 {
                for x in x0..x1 {
                    if within((x as f64 + 0.5, y as f64 + 0.5), a, b) {
                        raster.pixels[y * side + x] = 255;
                    }
                }
            }
        }
    }
    raster
}

/// The whole example as the model takes it: inked on a `side`-pixel pad, then fitted to 28×28
/// as the pad's drawings are.
pub fn example_image(side: usize) -> [u8; IMAGE_PIXELS] {
    to_mnist(&inked(&example_strokes(side as f64), side)).expect("the example inks the pad")
}
