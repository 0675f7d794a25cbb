use vitlab::analysis::preprocess::{Raster, to_mnist};
use vitlab::data::IMAGE_SIDE;

fn filled(width: usize, height: usize, rect: (usize, usize, usize, usize)) -> Raster {
    let mut raster = Raster::new(width, height);
    for y in rect.1..rect.3 {
        for x in rect.0..rect.2 {
            raster.pixels[y * width + x] = 255;
        }
    }
    raster
}

fn bounds(image: &[u8]) -> (usize, usize, usize, usize) {
    let raster = Raster {
        width: IMAGE_SIDE,
        height: IMAGE_SIDE,
        pixels: image.to_vec(),
    };
    raster.ink_bounds().unwrap()
}

#[test]
fn nothing_drawn_gives_nothing() {
    assert_eq!(to_mnist(&Raster::new(280, 280)), None);
}

#[test]
fn a_tall_stroke_fits_20_pixels_high_keeping_its_aspect_and_is_centred() {
    // A 40×200 bar anywhere on a 280×280 canvas: 4×20 after fitting, centred at (14, 14).
    let image = to_mnist(&filled(280, 280, (10, 50, 50, 250))).unwrap();
    let (x0, y0, x1, y1) = bounds(&image);
    assert_eq!((x1 - x0, y1 - y0), (4, 20));
    assert_eq!((x0, y0), (12, 4));
    assert!(image.iter().filter(|&&p| p > 0).all(|&p| p == 255));
}

#[test]
fn the_centre_of_mass_lands_in_the_middle() {
    // An L shape, heavier at the bottom: centring its box would put the mass 4 pixels low.
    let mut raster = filled(100, 100, (0, 0, 10, 100));
    for y in 90..100 {
        for x in 0..100 {
            raster.pixels[y * 100 + x] = 255;
        }
    }
    let image = to_mnist(&raster).unwrap();
    let (mut mass, mut cx, mut cy) = (0.0, 0.0, 0.0);
    for y in 0..IMAGE_SIDE {
        for x in 0..IMAGE_SIDE {
            let m = image[y * IMAGE_SIDE + x] as f32;
            mass += m;
            cx += m * (x as f32 + 0.5);
            cy += m * (y as f32 + 0.5);
        }
    }
    assert!((cx / mass - 14.0).abs() <= 0.5, "{}", cx / mass);
    assert!((cy / mass - 14.0).abs() <= 0.5, "{}", cy / mass);
}

#[test]
fn downscaling_anti_aliases_thin_lines() {
    // A one-pixel line on a 200-pixel-wide drawing becomes a faint grey, not black or white.
    let mut raster = filled(200, 200, (0, 0, 200, 1));
    raster.pixels[199 * 200] = 255; // make the box 200 tall too
    let image = to_mnist(&raster).unwrap();
    let greys: Vec<u8> = image.iter().copied().filter(|&p| p > 0).collect();
    assert!(greys.iter().any(|&p| p < 128), "{greys:?}");
}

#[test]
fn a_lopsided_digit_is_shifted_without_losing_ink() {
    let mut raster = filled(100, 100, (0, 0, 10, 100));
    for y in 70..100 {
        for x in 0..100 {
            raster.pixels[y * 100 + x] = 255;
        }
    }
    let image = to_mnist(&raster).unwrap();
    let (x0, y0, x1, y1) = bounds(&image);
    assert_eq!((x1 - x0, y1 - y0), (20, 20));
    assert_eq!(y0, 0, "shifted up as far as it goes");
    assert!(x0 > 0);
}
