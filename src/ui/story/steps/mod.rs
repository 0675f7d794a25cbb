//! One file a step of a ViT's story: each a picture from the model's values, one or two plain
//! sentences, and the experiment that goes deeper.

mod attention;
mod class_token;
mod head;
mod input;
mod lens;
mod patches;
mod positions;
mod tokens;

use leptos::prelude::*;

use crate::place::{Address, Part, StoryStep};

/// The chosen step's detail.
pub(super) fn step_view(step: StoryStep) -> AnyView {
    match step {
        StoryStep::Input => view! { <input::Input /> }.into_any(),
        StoryStep::Patches => view! { <patches::Patches /> }.into_any(),
        StoryStep::Tokens => view! { <tokens::Tokens /> }.into_any(),
        StoryStep::Positions => view! { <positions::Positions /> }.into_any(),
        StoryStep::ClassToken => view! { <class_token::ClassToken /> }.into_any(),
        StoryStep::Attention => view! { <attention::Attention /> }.into_any(),
        StoryStep::Lens => view! { <lens::Lens /> }.into_any(),
        StoryStep::Head => view! { <head::Head /> }.into_any(),
    }
}

/// A step's layout: its picture, then its words and where to go deeper.
#[component]
pub(in crate::ui::story) fn StepLayout(
    /// The step's `data-testid`.
    testid: &'static str,
    /// The experiment that goes deeper, and what the link says.
    deeper: Part,
    deeper_says: &'static str,
    /// The picture (first), then the words.
    children: Children,
) -> impl IntoView {
    view! {
        <div class="story-step" data-testid=testid>
            {children()}
            <a class="deeper" href=Address::part(deeper).fragment()>{deeper_says}" →"</a>
        </div>
    }
}

/// Shown until the worker has told the story of the newest reading.
pub(super) fn telling() -> impl IntoView {
    view! { <p class="hint">"Following your digit through the model…"</p> }
}
