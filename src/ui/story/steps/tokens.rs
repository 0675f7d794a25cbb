//! Step 3: each patch flattened and projected by E into a token of D values.

use leptos::prelude::*;

use super::{StepLayout, telling};
use crate::analysis::story::patch_pixels;
use crate::place::Part;
use crate::ui::story::Told;
use crate::ui::story::patch_picker::PatchPicker;
use crate::ui::story::strip::Strip;
use crate::ui::widgets::{HeatCanvas, Palette};

#[component]
pub(super) fn Tokens() -> impl IntoView {
    let told = expect_context::<Told>();
    let (p, dim) = told.config.with_value(|c| (c.patch_size, c.dim));
    let pixels = Signal::derive(move || {
        let patch = told.patch();
        told.input.with(|i| {
            i.as_deref()
                .map(|image| {
                    patch_pixels(image, patch, p)
                        .into_iter()
                        .map(f32::from)
                        .collect()
                })
                .unwrap_or_default()
        })
    });
    let token = Signal::derive(move || {
        let patch = told.patch();
        told.story
            .with(|s| s.as_ref().map(|s| s.token(patch).to_vec()))
            .unwrap_or_default()
    });
    let filters = told.insight.with_value(|w| {
        w.filter_components
            .iter()
            .take(4)
            .map(|(component, share)| {
                view! {
                    <figure>
                        <HeatCanvas values=Signal::stored(component.clone()) grid=p size=32 palette=Palette::Diverging />
                        <figcaption>{format!("{:.0}%", 100.0 * share)}</figcaption>
                    </figure>
                }
            })
            .collect_view()
    });
    let values = move || {
        token.with(|t| {
            t.iter()
                .map(|v| format!("{v:.6}"))
                .collect::<Vec<_>>()
                .join(",")
        })
    };
    view! {
        <StepLayout testid="story-tokens" deeper=Part::InsideTheModel deeper_says="See what E's filters learned (the paper's Fig. 7, left)">
            <div class="story-picture story-equation">
                <PatchPicker size=112 />
                <figure>
                    <HeatCanvas values=pixels grid=p size=56 palette=Palette::Grey title="the patch's pixels" />
                    <figcaption>{format!("{} pixels", p * p)}</figcaption>
                </figure>
                <span class="story-op">"× E ="</span>
                <figure class="story-token" data-testid="story-token" data-patch=move || told.patch().to_string() data-values=values>
                    {move || match told.story.with(Option::is_some) {
                        true => view! { <Strip values=token label="the patch's token" /> }.into_any(),
                        false => telling().into_any(),
                    }}
                    <figcaption>{format!("a token of {dim} values")}</figcaption>
                </figure>
            </div>
            <p class="story-words">
                {format!("Each patch's {} pixels, flattened, are multiplied by one learned matrix E ({}→{dim}) and a bias is added: the patch becomes a token of {dim} numbers (blue negative, red positive). ", p * p, p * p)}
                "E is the same for every patch; its strongest patterns are these:"
            </p>
            <div class="filters story-filters" aria-label="E's four strongest patterns and their share of its variance">{filters}</div>
            <p class="hint">"Pick another patch on the small grid (a click, or the arrow keys)."</p>
        </StepLayout>
    }
}
