//! The digit the pad draws by itself on arrival (`example_digit`): the shipped model reads it as
//! the digit it is, drawn as the pad draws (a round pen 20 pixels wide on 280), and the pad
//! tells it, and the part of it drawn so far, from anything a person draws.

use vitlab::analysis::inference::{Classification, classify};
use vitlab::example_digit::{EXAMPLE_LABEL, example_image, example_strokes, inked, is_example};
use vitlab::shipped::DEFAULT_WEIGHTS;
use vitlab::weights;

use crate::{device, to_vec};

const PAD: usize = 280;

#[test]
fn the_default_model_reads_the_example_as_its_digit() {
    let image = example_image(PAD);
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

/// Every pixel of the pad against every segment: what `inked` must equal.
fn inked_everywhere(strokes: &[Vec<(f64, f64)>], side: usize) -> Vec<u8> {
    let radius = vitlab::example_digit::PEN_WIDTH / 2.0;
    let near = |(px, py): (f64, f64), (ax, ay): (f64, f64), (bx, by): (f64, f64)| {
        let (dx, dy) = (bx - ax, by - ay);
        let length = dx * dx + dy * dy;
        let t = if length == 0.0 {
            0.0
        } else {
            (((px - ax) * dx + (py - ay) * dy) / length).clamp(0.0, 1.0)
        };
        (px - ax - t * dx).hypot(py - ay - t * dy) <= radius
    };
    let mut pixels = vec![0; side * side];
    for y in 0..side {
        for x in 0..side {
            let p = (x as f64 + 0.5, y as f64 + 0.5);
            let ink = strokes.iter().any(|stroke| {
                stroke.len() == 1 && near(p, stroke[0], stroke[0])
                    || stroke.windows(2).any(|pair| near(p, pair[0], pair[1]))
            });
            pixels[y * side + x] = if ink { 255 } else { 0 };
        }
    }
    pixels
}

#[test]
fn the_pen_inks_within_half_its_width_of_each_stroke_and_nothing_off_the_pad() {
    let example = example_strokes(PAD as f64);
    assert_eq!(inked(&example, PAD).pixels, inked_everywhere(&example, PAD));
    // A dot: a disc of radius 10 (π·10² ≈ 314 pixels).
    let dot = inked(&[vec![(100.0, 100.0)]], PAD);
    let area = dot.pixels.iter().filter(|&&p| p == 255).count();
    assert!((290..=340).contains(&area), "{area} pixels");
    // Strokes over the edges and far off the pad ink what lies on it, and nothing panics.
    let off = vec![
        vec![(-50.0, -50.0), (5.0, 5.0)],
        vec![(1e9, 1e9), (f64::MAX, -1e9)],
        vec![(275.0, 140.0), (400.0, 140.0)],
    ];
    assert_eq!(inked(&off, PAD).pixels, inked_everywhere(&off, PAD));
    assert!(inked(&off, PAD).pixels.contains(&255));
}
