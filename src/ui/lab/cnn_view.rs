//! The CNN's side of the lab: its fixed receptive fields and first-layer filters.

use leptos::prelude::*;

use crate::analysis::inference::CnnInsight;
use crate::ui::widgets::{HeatCanvas, Palette};

/// What a CNN builds in, shown where a ViT shows what it learned: fixed, local windows that
/// grow with depth (its receptive fields), and the first layer's filters.
#[component]
pub fn CnnView(insight: CnnInsight) -> impl IntoView {
    let k = insight.kernel_size;
    let filters = insight
        .filters
        .into_iter()
        .enumerate()
        .map(|(i, filter)| {
            let title = format!("filter {}", i + 1);
            view! { <HeatCanvas values=Signal::stored(filter) grid=k size=42 palette=Palette::Diverging title=title /> }
        })
        .collect_view();
    let fields = insight
        .receptive_fields
        .iter()
        .enumerate()
        .map(|(layer, field)| {
            view! {
                <li data-testid=format!("receptive-field-{}", layer + 1) data-value=field.to_string()>
                    <span class="label">{format!("conv {}", layer + 1)}</span>
                    <span class="bar" style:width=format!("{:.1}%", 100.0 * *field as f32 / 28.0)></span>
                    <span class="value">{format!("{field}×{field} px")}</span>
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="analysis" data-testid="cnn-view">
            <section>
                <h3>"Receptive fields"</h3>
                <p class="hint">"The pixels each convolution sees, by construction: locality is built in, and a layer's view grows only with depth. A ViT's first layer may already attend across the whole digit (its mean attention distance, Fig. 7 right)."</p>
                <ol class="bars">{fields}</ol>
            </section>
            <section>
                <h3>"First-layer filters"</h3>
                <p class="hint">{format!("The {k}×{k} kernels of the first convolution: the same filter slides over every position (translation equivariance), where a ViT learns one projection per patch and must learn that neighbours are alike.")}</p>
                <div class="filters">{filters}</div>
            </section>
        </div>
    }
}
