//! Step 1: the 28×28 image the model is given, as the pad's centring and scaling made it.

use leptos::prelude::*;

use super::StepLayout;
use crate::place::Part;
use crate::ui::story::Told;
use crate::ui::widgets::{HeatCanvas, Palette};

#[component]
pub(super) fn Input() -> impl IntoView {
    let told = expect_context::<Told>();
    let grey = Signal::derive(move || {
        told.input.with(|i| {
            i.iter()
                .flatten()
                .map(|&p| f32::from(p))
                .collect::<Vec<_>>()
        })
    });
    let hex = move || {
        told.input.with(|i| {
            i.iter()
                .flatten()
                .map(|p| format!("{p:02x}"))
                .collect::<String>()
        })
    };
    view! {
        <StepLayout testid="story-input" deeper=Part::PatchesHidden deeper_says="Hide parts of it and see what each model still reads">
            <figure class="story-picture" data-image=hex>
                <HeatCanvas values=grey grid=28 size=168 palette=Palette::Grey title="the model's input" />
                <figcaption>"28 × 28 grey levels"</figcaption>
            </figure>
            <p class="story-words">
                "This is what the model gets: your drawing cropped, scaled to fit 20×20 pixels and centred in 28×28, as MNIST's digits are. "
                "Each pixel's grey level (0 to 255) is normalised with MNIST's mean and spread before the model reads it."
            </p>
        </StepLayout>
    }
}
