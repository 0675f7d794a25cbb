//! The digit the pad draws by itself on a first look at Draw, so that the page opens already at
//! work (as Transformer Explainer opens on an example sentence): a three, in one stroke, in
//! the pad's own pixels, and how to tell the pad's strokes are still (a part of) it, which the
//! person's first touch then replaces.

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
