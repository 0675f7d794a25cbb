//! Step 7: the logit lens: the class token read with the final LayerNorm and head after each
//! block, the answer forming.

use leptos::prelude::*;

use super::{StepLayout, telling};
use crate::analysis::inference::most_probable;
use crate::place::Part;
use crate::ui::story::Told;
use crate::ui::widgets::paint;

#[component]
pub(super) fn Lens() -> impl IntoView {
    let told = expect_context::<Told>();
    let rows = move || told.story.with(|s| s.as_ref().map(|s| s.lens.clone()));
    let settled = move || told.story.with(|s| s.as_ref().and_then(|s| s.settled_at()));
    let table = move || {
        let Some(rows) = rows() else {
            return telling().into_any();
        };
        let classes = rows.first().map_or(0, Vec::len);
        view! {
            <table class="lens-table" data-testid="story-lens">
                <thead><tr><th>"after block"</th>{(0..classes).map(|c| view! { <th>{c}</th> }).collect_view()}</tr></thead>
                <tbody>
                    {rows.into_iter().enumerate().map(|(block, row)| {
                        let top = most_probable(&row);
                        let values = row.iter().map(|p| format!("{p:.6}")).collect::<Vec<_>>().join(",");
                        view! {
                            <tr data-testid="story-lens-row" data-values=values>
                                <th>{block + 1}</th>
                                {row.iter().enumerate().map(|(c, &p)| {
                                    let [r, g, b] = paint::colour(p);
                                    let ink = if p > 0.6 { "#1d2330" } else { "#ffffff" };
                                    view! {
                                        <td class:top=c == top style=format!("background: rgb({r},{g},{b}); color: {ink}")
                                            title=format!("after block {}: {c} at {:.1}%", block + 1, 100.0 * p)>
                                            {if p >= 0.005 { format!("{:.0}", 100.0 * p) } else { String::new() }}
                                        </td>
                                    }
                                }).collect_view()}
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        }
        .into_any()
    };
    view! {
        <StepLayout testid="story-logit-lens" deeper=Part::BeyondRollout deeper_says="The lens beside gradient relevance, for any class">
            <div class="story-picture">{table}</div>
            <p class="story-words">
                "What would the model answer if it stopped early? After each block, the class token is read with the model's own final LayerNorm and head (the logit lens). "
                {move || match settled() {
                    Some(1) => "Here the answer is there from the first block on.".to_string(),
                    Some(block) => format!("Here the answer settles after block {block}, and the blocks after it only grow more sure."),
                    None => "Here it changes until the very last block.".to_string(),
                }}
            </p>
        </StepLayout>
    }
}
