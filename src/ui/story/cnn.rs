//! A CNN's story: the same eight steps, each saying plainly what a CNN has instead of what a
//! ViT does there (no patches, tokens, positions, class token, attention or lens; filters that
//! slide, windows that grow with depth), on the drawing's own input and prediction.

use leptos::prelude::*;

use super::{NothingDrawn, StepButtons, Stepper, StepsAhead};
use crate::analysis::inference::CnnInsight;
use crate::place::{Address, Part, StoryStep};
use crate::ui::lab::Prediction;
use crate::ui::state::{Classifications, Drawing};
use crate::ui::widgets::{HeatCanvas, Palette};

#[component]
pub(super) fn CnnStory(insight: CnnInsight, step: RwSignal<StoryStep>) -> impl IntoView {
    let drawing = expect_context::<Drawing>();
    let classifier = expect_context::<Classifications>();
    let insight = StoredValue::new(insight);
    let input = Signal::derive(move || {
        drawing.model_input.with(|i| {
            i.iter()
                .flatten()
                .map(|&p| f32::from(p))
                .collect::<Vec<f32>>()
        })
    });
    let drawn = Memo::new(move |_| drawing.model_input.with(Option::is_some));
    let body = move |step: StoryStep| -> AnyView {
        let (k, channels, fields) =
            insight.with_value(|c| (c.kernel_size, c.filters.len(), c.receptive_fields.clone()));
        let says = |words: String| view! { <p class="story-words">{words}</p> };
        match step {
            StoryStep::Input => view! {
                <figure class="story-picture">
                    <HeatCanvas values=input grid=28 size=168 palette=Palette::Grey title="the model's input" />
                    <figcaption>"28 × 28 grey levels"</figcaption>
                </figure>
                {says("The same input as a ViT's: your drawing scaled to fit 20×20 pixels and centred in 28×28, normalised with MNIST's mean and spread.".into())}
            }.into_any(),
            StoryStep::Patches => view! {
                <div class="filters story-picture">
                    {insight.with_value(|c| c.filters.iter().take(16).map(|f| view! {
                        <HeatCanvas values=Signal::stored(f.clone()) grid=k size=32 palette=Palette::Diverging />
                    }).collect_view())}
                </div>
                {says(format!("A CNN cuts nothing into patches. Instead its first layer slides {channels} small filters of {k}×{k} pixels over every position of the image, the same filters everywhere (some of them here)."))}
            }.into_any(),
            StoryStep::Tokens => says(format!("A CNN makes no tokens. Each filter gives a map of how strongly its pattern is present at each pixel: {channels} maps of 28×28 after the first layer, each halved by pooling after each block.")).into_any(),
            StoryStep::Positions => says("A CNN has no position embedding and needs none: the feature maps keep the image's layout, and the same filter applied everywhere makes a pattern mean the same wherever it is (translation equivariance), built in where a ViT must learn it.".into()).into_any(),
            StoryStep::ClassToken => says("A CNN has no class token: at the end its last feature maps are averaged over the image into one vector, which the head reads.".into()).into_any(),
            StoryStep::Attention => view! {
                <ol class="bars story-picture" data-testid="story-receptive-fields">
                    {fields.iter().enumerate().map(|(layer, &field)| view! {
                        <li>
                            <span class="label">{format!("conv {}", layer + 1)}</span>
                            <span class="bar" style:width=format!("{:.1}%", 100.0 * field as f32 / 28.0)></span>
                            <span class="value">{format!("{field}×{field} px")}</span>
                        </li>
                    }).collect_view()}
                </ol>
                {says("A CNN has no attention: each layer sees a fixed window of the layer before, and the window grows only with depth, as here. A ViT's first layer can already look across the whole digit.".into())}
            }.into_any(),
            StoryStep::Lens => says("There is no class token to read after each block, so no logit lens: a CNN's answer exists only at its head.".into()).into_any(),
            StoryStep::Head => view! {
                <div class="story-picture prediction"><Prediction result=classifier.result /></div>
                {says("The pooled vector goes through the head, a linear layer: ten scores, one a digit, which the softmax turns into probabilities.".into())}
            }.into_any(),
        }
    };
    view! {
        <p class="hint" data-testid="story-cnn">"The model in use is a CNN: each step says what it has instead of what a ViT does there. Choose a ViT above to follow its path."</p>
        {move || match drawn.get() {
            false => view! { <StepsAhead /><NothingDrawn /> }.into_any(),
            true => view! {
                <Stepper step=step />
                <div class="story-panel" role="tabpanel" id="story-panel">
                    <div class="story-step">
                        {move || body(step.get())}
                        <a class="deeper" href=Address::part(Part::VitAgainstCnn).fragment()>"The CNN against the ViT: what each builds in →"</a>
                    </div>
                    <StepButtons step=step />
                </div>
            }.into_any(),
        }}
    }
}
