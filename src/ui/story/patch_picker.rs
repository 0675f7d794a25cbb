//! The model's input with its patch grid drawn on it and the patch the story follows marked; a
//! click, a touch or a hover picks another patch (the arrow keys too, once it has the focus).

use leptos::ev::{KeyboardEvent, MouseEvent};
use leptos::html::Canvas;
use leptos::prelude::*;

use super::Told;
use crate::data::IMAGE_SIDE;
use crate::ui::widgets::paint;

#[component]
pub(super) fn PatchPicker(
    /// Canvas side in pixels.
    size: u32,
    /// Draw over the input a heat map of one value a patch (e.g. where the patch looks).
    #[prop(optional, into)]
    over: Option<Signal<Vec<f32>>>,
) -> impl IntoView {
    let told = expect_context::<Told>();
    let grid = told.config.with_value(|c| c.grid_size());
    let canvas_ref = NodeRef::<Canvas>::new();
    Effect::new(move |_| {
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        let image = told.input.get().unwrap_or_default();
        let patch = told.patch();
        paint::grey_image(&canvas, &image, IMAGE_SIDE);
        if let Some(over) = over {
            over.with(|values| {
                if !values.is_empty() {
                    paint::heatmap(&canvas, values, grid, paint::range(values), 0.6);
                    // The digit stays readable under the map.
                    if let Some(ctx) = paint::context(&canvas) {
                        let _ = ctx.set_global_composite_operation("lighter");
                        paint::grey_image_on(&ctx, &canvas, &dimmed(&image), IMAGE_SIDE);
                        let _ = ctx.set_global_composite_operation("source-over");
                    }
                }
            });
        }
        paint::patch_grid(&canvas, grid, Some(patch));
    });
    let pick = move |event: MouseEvent| {
        if let Some(canvas) = canvas_ref.get_untracked()
            && let Some(patch) = paint::cell_at(&canvas, &event, grid)
        {
            told.picked.set(Some(patch));
        }
    };
    let on_key = move |event: KeyboardEvent| {
        let patch = told.patch();
        let (row, col) = (patch / grid, patch % grid);
        let moved = match event.key().as_str() {
            "ArrowLeft" if col > 0 => patch - 1,
            "ArrowRight" if col + 1 < grid => patch + 1,
            "ArrowUp" if row > 0 => patch - grid,
            "ArrowDown" if row + 1 < grid => patch + grid,
            _ => return,
        };
        event.prevent_default();
        // The story's own arrow keys are for its steps: not while a patch is being picked.
        event.stop_propagation();
        told.picked.set(Some(moved));
    };
    let label = move || {
        let patch = told.patch();
        format!(
            "row {}, column {} of {grid}×{grid}",
            patch / grid + 1,
            patch % grid + 1
        )
    };
    let patches = grid * grid;
    view! {
        // A two-way slider over the patches, row by row: the arrow keys move along the grid.
        <canvas node_ref=canvas_ref class="patch-picker" width=size height=size tabindex="0" role="slider"
            aria-label="the patch the story follows" aria-valuetext=label
            aria-valuemin="1" aria-valuemax=patches.to_string() aria-valuenow=move || (told.patch() + 1).to_string()
            data-testid="patch-picker" data-patch=move || told.patch().to_string()
            on:click=pick on:mousemove=pick on:keydown=on_key></canvas>
    }
}

/// The image at a third of its brightness, added over a map so the strokes show through it.
fn dimmed(image: &[u8]) -> Vec<u8> {
    image.iter().map(|&p| p / 3).collect()
}
