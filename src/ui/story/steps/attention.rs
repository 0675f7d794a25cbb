//! Step 6: attention, layer by layer: where the class token looks in each head of a layer,
//! the rollout through the layers so far, and where the picked patch looks.

use leptos::prelude::*;

use super::StepLayout;
use crate::place::Part;
use crate::ui::story::Told;
use crate::ui::story::patch_picker::PatchPicker;
use crate::ui::widgets::HeatCanvas;

#[component]
pub(super) fn Attention() -> impl IntoView {
    let told = expect_context::<Told>();
    let (grid, depth, heads) = told
        .config
        .with_value(|c| (c.grid_size(), c.depth, c.heads));
    let patches = grid * grid;
    let layer = told.layer;
    let class_map = move |head: usize| {
        Signal::derive(move || {
            let l = layer.get();
            told.reading
                .with(|r| {
                    r.as_ref()
                        .and_then(|r| r.class_maps.get(l)?.get(head).cloned())
                })
                .unwrap_or_default()
        })
    };
    let rollout = Signal::derive(move || {
        let l = layer.get();
        told.story
            .with(|s| s.as_ref().and_then(|s| s.rollout_by_layer.get(l).cloned()))
            .unwrap_or_default()
    });
    let looks = Signal::derive(move || {
        let (l, patch) = (layer.get(), told.patch());
        told.reading
            .with(|r| {
                r.as_ref()
                    .and_then(|r| {
                        r.patch_maps
                            .get(l)?
                            .get(patch * patches..(patch + 1) * patches)
                    })
                    .map(<[f32]>::to_vec)
            })
            .unwrap_or_default()
    });
    view! {
        <StepLayout testid="story-attention" deeper=Part::HeadsMatter deeper_says="Switch heads off, and see which ones matter">
            <div class="story-layers" role="group" aria-label="the layer shown">
                {(0..depth).map(|l| view! {
                    <button class="small" aria-pressed=move || (layer.get() == l).to_string() on:click=move |_| layer.set(l)>
                        {format!("layer {}", l + 1)}
                    </button>
                }).collect_view()}
            </div>
            <div class="story-picture story-attention" data-layer=move || layer.get().to_string()>
                <figure>
                    <div class="story-heads">
                        {(0..heads).map(|h| view! {
                            <HeatCanvas values=class_map(h) grid=grid size=48 title=format!("head {}", h + 1) />
                        }).collect_view()}
                    </div>
                    <figcaption>{move || format!("where the class token looks in layer {}, head by head", layer.get() + 1)}</figcaption>
                </figure>
                <figure>
                    <HeatCanvas values=rollout grid=grid size=112 title="rollout so far" />
                    <figcaption>{move || format!("rollout through layers 1–{}", layer.get() + 1)}</figcaption>
                </figure>
                <figure>
                    <PatchPicker size=112 over=looks />
                    <figcaption>{move || format!("where the marked patch looks in layer {}", layer.get() + 1)}</figcaption>
                </figure>
            </div>
            <p class="story-words">
                {format!("In each of the {depth} layers every token looks at every other, through {heads} heads, and takes in a mix of what it sees. ")}
                "Heads look in different places; the rollout multiplies the layers' attention to show what reaches the class token through all the layers so far."
            </p>
        </StepLayout>
    }
}
