//! Figures as CSV (`analysis::csv`): the columns each export writes, labels kept one field.

use vitlab::analysis::csv::{confusion, distances, map, maps, series};

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
