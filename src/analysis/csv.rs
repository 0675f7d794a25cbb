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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_counts_rows_and_columns_from_one_and_keeps_its_label_one_field() {
        let csv = map(&[0.5, 1.0, 2.0, 3.5], 2, "rollout, all layers");
        assert_eq!(
            csv,
            "row,column,rollout; all layers\n1,1,0.5\n1,2,1\n2,1,2\n2,2,3.5\n"
        );
    }

    #[test]
    fn maps_follow_one_another_under_one_header() {
        let csv = maps([("a", &[1.0, 2.0][..], 1), ("b, c", &[3.0][..], 1)]);
        assert_eq!(csv, "map,row,column,value\na,1,1,1\na,2,1,2\nb; c,1,1,3\n");
    }

    #[test]
    fn a_grid_of_zero_is_read_as_one_column_rather_than_dividing_by_zero() {
        assert_eq!(map(&[7.0], 0, "x"), "row,column,x\n1,1,7\n");
    }

    #[test]
    fn series_write_a_row_per_point() {
        let points = [(0.0, 0.9), (10.0, 0.5)];
        let csv = series([("ViT, random", &points[..])], "% hidden");
        assert_eq!(
            csv,
            "series,% hidden,value\nViT; random,0,0.9\nViT; random,10,0.5\n"
        );
    }

    #[test]
    fn distances_name_each_series_and_skip_an_unknown_one() {
        let drawing = vec![vec![1.5, 2.0], vec![3.0, 4.0]];
        let csv = distances(Some(&drawing), None);
        assert_eq!(
            csv,
            "series,layer,head,distance_px\nthis drawing,1,1,1.5\nthis drawing,1,2,2\n\
             this drawing,2,1,3\nthis drawing,2,2,4\n"
        );
    }

    #[test]
    fn a_confusion_matrix_is_a_row_per_cell_digits_as_they_are() {
        let csv = confusion(&[vec![5, 1], vec![0, 7]]);
        assert_eq!(csv, "true,predicted,count\n0,0,5\n0,1,1\n1,0,0\n1,1,7\n");
    }
}
