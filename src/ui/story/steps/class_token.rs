//! Step 5: the class token joins the patches' tokens: the whole sequence the first block reads.

use leptos::prelude::*;

use super::{StepLayout, telling};
use crate::place::Part;
use crate::ui::story::Told;
use crate::ui::story::strip::{Matrix, Strip};

#[component]
pub(super) fn ClassToken() -> impl IntoView {
    let told = expect_context::<Told>();
    let (tokens, dim) = told.config.with_value(|c| (c.num_tokens(), c.dim));
    let sequence = Signal::derive(move || {
        told.story
            .with(|s| s.as_ref().map(|s| s.embedded.clone()))
            .unwrap_or_default()
    });
    let class = Signal::derive(move || {
        told.story
            .with(|s| s.as_ref().map(|s| s.entering(0).to_vec()))
            .unwrap_or_default()
    });
    // Each token a row: at least two pixels high, the whole no taller than the other pictures.
    let height = u32::try_from((tokens * 3).clamp(60, 200)).unwrap_or(200);
    view! {
        <StepLayout testid="story-class-token" deeper=Part::BeyondRollout deeper_says="What the class token relies on, beyond rollout">
            {move || match told.story.with(Option::is_some) {
                true => view! {
                    <div class="story-picture story-sequence">
                        <figure>
                            <Strip values=class label="the class token as it enters" />
                            <figcaption>"the class token, first"</figcaption>
                        </figure>
                        <figure>
                            <Matrix values=sequence rows=tokens cols=dim width=256 height=height label="every token entering the first block, one a row" />
                            <figcaption>{format!("{tokens} tokens × {dim} values: the class token, then the {} patches", tokens - 1)}</figcaption>
                        </figure>
                    </div>
                }.into_any(),
                false => telling().into_any(),
            }}
            <p class="story-words">
                {format!("One more token joins at the front: the class token, learned, the same for every image. The {tokens} tokens go through the encoder together, and the answer is read from the class token alone at the end: it has to gather what it needs from the patches.")}
            </p>
        </StepLayout>
    }
}
