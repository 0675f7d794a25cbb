use vitlab::slice_mean::SliceMean;

#[test]
fn the_mean_of_equal_slices_is_the_mean_of_their_figures() {
    let mut mean = SliceMean::default();
    mean.add(vec![vec![1.0, 2.0], vec![3.0]]);
    mean.add(vec![vec![3.0, 4.0], vec![5.0]]);
    assert_eq!(mean.mean(), vec![vec![2.0, 3.0], vec![4.0]]);
}

#[test]
fn one_slice_is_its_own_mean() {
    let mut mean = SliceMean::default();
    mean.add(vec![vec![0.5, 7.0]]);
    assert_eq!(mean.mean(), vec![vec![0.5, 7.0]]);
}

#[test]
fn no_slice_has_no_figures() {
    assert!(SliceMean::default().mean().is_empty());
}
