//! The CNN's side of the lab: its fixed receptive fields and first-layer filters.

use leptos::prelude::*;

use crate::analysis::inference::CnnInsight;
use crate::ui::widgets::{HeatCanvas, Palette, Sheet, SheetButtons, Tile};

/// "filter 3": the `i`th filter, counted from 1.
fn filter_name(i: usize) -> String {
    format!("filter {}", i + 1)
}

/// What a CNN builds in, shown where a ViT shows what it learned: fixed, local windows that
/// grow with depth (its receptive fields), and the first layer's filters.
#[component]
pub fn CnnView(insight: CnnInsight) -> impl IntoView {
    let k = insight.kernel_size;
    let sheet = {
        let filters = insight.filters.clone();
        Callback::new(move |()| {
            Some(Sheet {
                title: format!("The first convolution's {k}×{k} filters"),
                tiles: filters
                    .iter()
                    .enumerate()
                    .map(|(i, filter)| Tile {
                        label: filter_name(i),
                        values: filter.clone(),
                        grid: k,
                        palette: Palette::Diverging,
                    })
                    .collect(),
                columns: 8,
                numbers: false,
            })
        })
    };
    let filters = insight
        .filters
        .into_iter()
        .enumerate()
        .map(|(i, filter)| {
            let title = filter_name(i);
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
                <SheetButtons sheet=sheet name="cnn-filters" />
                <div class="filters">{filters}</div>
            </section>
        </div>
    }
}
