//! The CPU kernels' matrix product (`model::add_product`), the one every linear layer of the
//! model's own kernels runs, against a plain triple loop in `f64`.

use vitlab::model::{Matrix, add_product};

fn values(count: usize, seed: u32) -> Vec<f32> {
    let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state % 2001) as f32 / 1000.0 - 1.0
        })
        .collect()
}

/// The element at `row`, `column` of `matrix`, through its strides.
fn at(matrix: &Matrix<'_>, row: usize, column: usize) -> f32 {
    matrix.values[row * matrix.row_stride + column * matrix.column_stride]
}

fn reference(output: &mut [f32], lhs: Matrix<'_>, rhs: Matrix<'_>) {
    for i in 0..lhs.rows {
        for j in 0..rhs.columns {
            let sum: f64 = (0..lhs.columns)
                .map(|p| f64::from(at(&lhs, i, p)) * f64::from(at(&rhs, p, j)))
                .sum();
            output[i * rhs.columns + j] += sum as f32;
        }
    }
}

/// Sizes on both sides of every block and tile edge, and the three layouts the linear
/// layers use (plain, `rhs` transposed, `lhs` transposed), added to an output that is not
/// zero.
#[test]
fn every_size_and_layout_gives_the_product() {
    for (m, k, n) in [
        (1, 1, 1),
        (2, 3, 16),
        (3, 5, 17),
        (65, 64, 10),
        (64, 257, 33),
        (129, 513, 192),
        (7, 600, 15),
    ] {
        let (a, b) = (values(m * k, 1), values(k * n, 2));
        let at = values(k * m, 3);
        let bt = values(n * k, 4);
        let layouts = [
            (Matrix::row_major(&a, m, k), Matrix::row_major(&b, k, n)),
            (
                Matrix::row_major(&a, m, k),
                Matrix::row_major(&bt, n, k).transposed(),
            ),
            (
                Matrix::row_major(&at, k, m).transposed(),
                Matrix::row_major(&b, k, n),
            ),
        ];
        for (layout, (lhs, rhs)) in layouts.into_iter().enumerate() {
            let start = values(m * n, 5);
            let (mut got, mut want) = (start.clone(), start);
            add_product(&mut got, lhs, rhs);
            reference(&mut want, lhs, rhs);
            for (index, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-5 * (k as f32).sqrt().max(1.0),
                    "{m}×{k}·{k}×{n}, layout {layout}, element {index}: {g} against {w}"
                );
            }
        }
    }
}
