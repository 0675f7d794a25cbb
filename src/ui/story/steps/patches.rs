//! Step 2: the image cut into patches, at the grid of the model in use.

use leptos::prelude::*;

use super::StepLayout;
use crate::place::Part;
use crate::ui::story::Told;
use crate::ui::story::patch_picker::PatchPicker;

#[component]
pub(super) fn Patches() -> impl IntoView {
    let told = expect_context::<Told>();
    let (grid, p) = told.config.with_value(|c| (c.grid_size(), c.patch_size));
    let patches = grid * grid;
    view! {
        <StepLayout testid="story-patches" deeper=Part::PatchesHidden deeper_says="Hide patches and watch the ViT and a CNN read what is left">
            <figure class="story-picture" data-patches=patches data-patch-size=p>
                <PatchPicker size=168 />
                <figcaption>{format!("{patches} patches of {p}×{p} pixels")}</figcaption>
            </figure>
            <p class="story-words">
                {format!("The ViT cuts the image into {grid} rows of {grid} patches, each {p}×{p} pixels: {patches} in all. ")}
                "From here on it sees no pixel beside another, only patches, in a list: where each came from has to be told (step 4)."
            </p>
        </StepLayout>
    }
}
