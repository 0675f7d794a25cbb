//! Step 4: the learned position embedding added to each token: the picked patch's position
//! alike to every other's, and its token before and after.

use leptos::prelude::*;

use super::{StepLayout, telling};
use crate::place::Part;
use crate::ui::story::Told;
use crate::ui::story::patch_picker::PatchPicker;
use crate::ui::story::strip::Strip;
use crate::ui::widgets::{HeatCanvas, Palette};

#[component]
pub(super) fn Positions() -> impl IntoView {
    let told = expect_context::<Told>();
    let (grid, patches) = (told.config.with_value(|c| c.grid_size()), told.patches());
    let alike = Signal::derive(move || {
        let patch = told.patch();
        told.insight.with_value(|w| {
            w.position_similarity
                .get(patch * patches..(patch + 1) * patches)
                .map(<[f32]>::to_vec)
                .unwrap_or_default()
        })
    });
    let before = Signal::derive(move || {
        let patch = told.patch();
        told.story
            .with(|s| s.as_ref().map(|s| s.token(patch).to_vec()))
            .unwrap_or_default()
    });
    let after = Signal::derive(move || {
        let patch = told.patch();
        told.story
            .with(|s| s.as_ref().map(|s| s.entering(patch + 1).to_vec()))
            .unwrap_or_default()
    });
    let at = move || {
        let patch = told.patch();
        format!("row {}, column {}", patch / grid + 1, patch % grid + 1)
    };
    view! {
        <StepLayout testid="story-positions" deeper=Part::InsideTheModel deeper_says="Every position's similarity at once (the paper's Fig. 7, centre)">
            <div class="story-picture story-equation">
                <PatchPicker size=112 />
                <figure>
                    <HeatCanvas values=alike grid=grid size=112 palette=Palette::HeatFixed(-1.0, 1.0) title="how alike this position is to each other one" />
                    <figcaption>{move || format!("patch at {}: alike to …", at())}</figcaption>
                </figure>
            </div>
            {move || match told.story.with(Option::is_some) {
                true => view! {
                    <div class="story-strips">
                        <span>"token"</span><Strip values=before label="the token before its position" />
                        <span>"+ position ="</span><Strip values=after label="the token with its position" />
                    </div>
                }.into_any(),
                false => telling().into_any(),
            }}
            <p class="story-words">
                "A list of patches says nothing of where each was, so a learned position embedding is added to each token. "
                "The map shows how alike this patch's position embedding is to every other's (yellow: alike): the model learned its own neighbours, rows and columns."
            </p>
        </StepLayout>
    }
}
