//! MNIST-appropriate augmentation: small random shifts, rotations and scaling, never flips
//! (a mirrored 2 is not a digit). Works on grey levels, natively and in the browser.

use super::{IMAGE_PIXELS, IMAGE_SIDE};
use crate::rng::SplitMix64;

/// How far the random affine transform may go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Augmentation {
    /// Largest shift in pixels, each axis.
    pub max_shift: f32,
    /// Largest rotation in degrees, either way.
    pub max_rotation_degrees: f32,
    /// Largest relative change of size, e.g. 0.1 for 90%–110%.
    pub max_scale: f32,
}

impl Default for Augmentation {
    fn default() -> Self {
        Self {
            max_shift: 2.0,
            max_rotation_degrees: 10.0,
            max_scale: 0.1,
        }
    }
}

impl Augmentation {
    /// A randomly moved copy of `image`, resampled bilinearly about the image centre.
    pub fn apply(&self, image: &[u8], rng: &mut SplitMix64) -> [u8; IMAGE_PIXELS] {
        let mut symmetric = |limit: f32| (rng.next_f32() * 2.0 - 1.0) * limit;
        let angle = symmetric(self.max_rotation_degrees).to_radians();
        let scale = 1.0 + symmetric(self.max_scale);
        let (dx, dy) = (symmetric(self.max_shift), symmetric(self.max_shift));
        transform(image, angle, scale, dx, dy)
    }
}

/// Rotates by `angle` radians and scales by `scale` about the centre, then shifts.
pub fn transform(image: &[u8], angle: f32, scale: f32, dx: f32, dy: f32) -> [u8; IMAGE_PIXELS] {
    let centre = (IMAGE_SIDE as f32 - 1.0) / 2.0;
    let (sin, cos) = angle.sin_cos();
    let mut out = [0u8; IMAGE_PIXELS];
    for y in 0..IMAGE_SIDE {
        for x in 0..IMAGE_SIDE {
            // Inverse map: where in the source does this output pixel come from?
            let (u, v) = (x as f32 - centre - dx, y as f32 - centre - dy);
            let sx = (cos * u + sin * v) / scale + centre;
            let sy = (-sin * u + cos * v) / scale + centre;
            out[y * IMAGE_SIDE + x] = bilinear(image, sx, sy).round() as u8;
        }
    }
    out
}

fn bilinear(image: &[u8], x: f32, y: f32) -> f32 {
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let pixel = |px: f32, py: f32| {
        if px < 0.0 || py < 0.0 || px >= IMAGE_SIDE as f32 || py >= IMAGE_SIDE as f32 {
            0.0
        } else {
            image[py as usize * IMAGE_SIDE + px as usize] as f32
        }
    };
    let top = pixel(x0, y0) * (1.0 - fx) + pixel(x0 + 1.0, y0) * fx;
    let bottom = pixel(x0, y0 + 1.0) * (1.0 - fx) + pixel(x0 + 1.0, y0 + 1.0) * fx;
    top * (1.0 - fy) + bottom * fy
}
