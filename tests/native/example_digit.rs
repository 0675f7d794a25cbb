//! The digit the pad draws by itself on arrival (`example_digit`): the shipped model reads it as
//! the digit it is, drawn as the pad draws (a round pen 20 pixels wide on 280), and the pad
//! tells it, and the part of it drawn so far, from anything a person draws.

use vitlab::analysis::inference::{Classification, classify};
use vitlab::analysis::preprocess::{Raster, to_mnist};
use vitlab::example_digit::{EXAMPLE_LABEL, example_strokes, is_example};
use vitlab::shipped::DEFAULT_WEIGHTS;
use vitlab::weights;

use crate::{device, to_vec};

const PAD: usize = 280;
const PEN_RADIUS: f64 = 10.0;

/// The strokes as the pad's round pen inks them.
fn drawn(strokes: &[Vec<(f64, f64)>]) -> Raster {
    let mut raster = Raster::new(PAD, PAD);
    let near = |(px, py): (f64, f64), (ax, ay): (f64, f64), (bx, by): (f64, f64)| {
        let (dx, dy) = (bx - ax, by - ay);
        let length = dx * dx + dy * dy;
        let t = if length == 0.0 {
            0.0
        } else {
            (((px - ax) * dx + (py - ay) * dy) / length).clamp(0.0, 1.0)
        };
        (px - ax - t * dx).hypot(py - ay - t * dy) <= PEN_RADIUS
    };
    for y in 0..PAD {
        for x in 0..PAD {
            let p = (x as f64 + 0.5, y as f64 + 0.5);
            let inked = strokes.iter().any(|stroke| {
                stroke.len() == 1 && near(p, stroke[0], stroke[0])
                    || stroke.windows(2).any(|pair| near(p, pair[0], pair[1]))
            });
            if inked {
                raster.pixels[y * PAD + x] = 255;
            }
        }
    }
    raster
}

#[test]
fn the_default_model_reads_the_example_as_its_digit() {
    let image = to_mnist(&drawn(&example_strokes(PAD as f64))).expect("the example inks the pad");
    let path = DEFAULT_WEIGHTS.strip_suffix(".gz").unwrap();
    let file = weights::decode(&std::fs::read(path).unwrap()).unwrap();
    let config = file.config.clone();
    let device = device();
    let model = file.into_model(&device);
    let packed = to_vec(classify(&model, &[image], None, &device).packed);
    let probabilities = Classification::from_packed(&packed, &config).probabilities;
    let read = (0..10)
        .max_by(|&a, &b| probabilities[a].total_cmp(&probabilities[b]))
        .unwrap();
    assert_eq!(read, EXAMPLE_LABEL as usize, "{probabilities:?}");
    assert!(probabilities[read] > 0.9, "{probabilities:?}");
}

#[test]
fn the_example_moves_at_a_pen_s_pace_and_is_told_from_a_person_s_drawing() {
    let side = PAD as f64;
    let example = example_strokes(side);
    let points: usize = example.iter().map(Vec::len).sum();
    assert!((40..=120).contains(&points), "{points} points");
    for stroke in &example {
        for pair in stroke.windows(2) {
            let step = (pair[1].0 - pair[0].0).hypot(pair[1].1 - pair[0].1);
            assert!(step > 0.0 && step <= 9.0 + 1e-9, "a step of {step}");
        }
        assert!(
            stroke
                .iter()
                .all(|&(x, y)| (0.0..side).contains(&x) && (0.0..side).contains(&y))
        );
    }
    // The whole, and every part drawn so far.
    assert!(is_example(&example, side));
    for cut in 1..example[0].len() {
        assert!(
            is_example(&[example[0][..cut].to_vec()], side),
            "{cut} points"
        );
    }
    // Nothing drawn, a person's stroke, the example with a person's stroke after it.
    assert!(!is_example(&[], side));
    assert!(!is_example(&[vec![(140.0, 40.0), (140.0, 240.0)]], side));
    let mut more = example.clone();
    more.push(vec![(10.0, 10.0)]);
    assert!(!is_example(&more, side));
    let mut moved = example[0].clone();
    moved[3].0 += 0.5;
    assert!(!is_example(&[moved], side));
    // Drawn at another size, it is not this pad's.
    assert!(!is_example(&example_strokes(side / 2.0), side));
}
