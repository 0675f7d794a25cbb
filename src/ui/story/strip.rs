//! Vectors and matrices of the model as pictures: a token as a strip of its D values, the
//! tokens entering the first block as rows, blue for negative, white for zero, red for
//! positive (each picture scaled by its largest magnitude).

use leptos::html::Canvas;
use leptos::prelude::*;

use crate::ui::widgets::paint;

/// A `rows × cols` matrix (row-major) as a canvas `width × height` pixels.
#[component]
pub(super) fn Matrix(
    #[prop(into)] values: Signal<Vec<f32>>,
    rows: usize,
    cols: usize,
    width: u32,
    height: u32,
    /// What a screen reader hears before the values' range.
    #[prop(into)]
    label: String,
    #[prop(optional, into)] testid: String,
) -> impl IntoView {
    let canvas_ref = NodeRef::<Canvas>::new();
    Effect::new(move |_| {
        let values = values.get();
        if let Some(canvas) = canvas_ref.get() {
            paint::diverging_matrix(&canvas, &values, rows, cols);
        }
    });
    let described = move || {
        values.with(|v| {
            let (lo, hi) = paint::range(v);
            format!("{label}: {} values from {lo:.2} to {hi:.2}", v.len())
        })
    };
    view! {
        <canvas node_ref=canvas_ref class="matrix" width=width height=height role="img"
            aria-label=described data-testid=testid></canvas>
    }
}

/// One vector as a strip of cells.
#[component]
pub(super) fn Strip(
    #[prop(into)] values: Signal<Vec<f32>>,
    #[prop(into)] label: String,
    #[prop(optional, into)] testid: String,
) -> impl IntoView {
    let cols = values.with_untracked(Vec::len).max(1);
    // Four pixels a value, at least a readable width.
    let width = u32::try_from(cols * 4).unwrap_or(u32::MAX).max(128);
    view! { <Matrix values=values rows=1 cols=cols width=width height=18 label=label testid=testid /> }
}
