//! The numbers behind the page's figures as CSV: maps cell by cell, series point by point,
//! the distance chart and the confusion matrix. Pure text from numbers; the page offers the
//! files, `vit` and the tests read them. Rows and columns count from 1, digits as they are.

use std::fmt::Write;

/// A label as one CSV field: its commas become semicolons (labels are prose, never quoted).
pub fn field(label: &str) -> String {
    label.replace(',', ";")
}

/// One map, `row,column,<label>` per cell of its `grid × grid`, row-major.
pub fn map(values: &[f32], grid: usize, label: &str) -> String {
    let grid = grid.max(1);
    let mut csv = format!("row,column,{}\n", field(label));
    for (i, value) in values.iter().enumerate() {
        let _ = writeln!(csv, "{},{},{value}", i / grid + 1, i % grid + 1);
    }
    csv
}

/// Several maps, `map,row,column,value` per cell: each map as `(label, values, grid)`.
pub fn maps<'a>(maps: impl IntoIterator<Item = (&'a str, &'a [f32], usize)>) -> String {
    let mut csv = String::from("map,row,column,value\n");
    for (label, values, grid) in maps {
        let (label, grid) = (field(label), grid.max(1));
        for (i, value) in values.iter().enumerate() {
            let _ = writeln!(csv, "{label},{},{},{value}", i / grid + 1, i % grid + 1);
        }
    }
    csv
}

/// Lines of points, `series,<x label>,value` per point: each line as `(label, points)`.
pub fn series<'a>(
    lines: impl IntoIterator<Item = (&'a str, &'a [(f64, f64)])>,
    x_label: &str,
) -> String {
    let mut csv = format!("series,{},value\n", field(x_label));
    for (label, points) in lines {
        let label = field(label);
        for (x, y) in points {
            let _ = writeln!(csv, "{label},{x},{y}");
        }
    }
    csv
}

/// Mean attention distance, `series,layer,head,distance_px`: the drawing's and the test
/// digits', each `[layer][head]` where known.
pub fn distances(drawing: Option<&[Vec<f32>]>, batch: Option<&[Vec<f32>]>) -> String {
    let mut csv = String::from("series,layer,head,distance_px\n");
    for (series, layers) in [("this drawing", drawing), ("test digits", batch)] {
        for (l, heads) in layers.into_iter().flatten().enumerate() {
            for (h, distance) in heads.iter().enumerate() {
                let _ = writeln!(csv, "{series},{},{},{distance}", l + 1, h + 1);
            }
        }
    }
    csv
}

/// A confusion matrix `confusion[true][predicted]`, `true,predicted,count` per cell.
pub fn confusion(confusion: &[Vec<usize>]) -> String {
    let mut csv = String::from("true,predicted,count\n");
    for (label, row) in confusion.iter().enumerate() {
        for (guess, count) in row.iter().enumerate() {
            let _ = writeln!(csv, "{label},{guess},{count}");
        }
    }
    csv
}
