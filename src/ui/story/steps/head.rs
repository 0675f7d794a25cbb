//! Step 8: the head and the softmax: the class token after the last block, normalised and
//! projected to one score a class, and the scores turned into probabilities.

use leptos::prelude::*;

use super::{StepLayout, telling};
use crate::place::Part;
use crate::ui::story::Told;

#[component]
pub(super) fn Head() -> impl IntoView {
    let told = expect_context::<Told>();
    let bars = move || {
        let Some(logits) = told.story.with(|s| s.as_ref().map(|s| s.logits.clone())) else {
            return telling().into_any();
        };
        let probabilities = told
            .reading
            .with(|r| r.as_ref().map(|r| r.probabilities.clone()))
            .unwrap_or_default();
        let scale = logits.iter().fold(1e-6f32, |m, l| m.max(l.abs()));
        view! {
            <table class="head-table" data-testid="story-head">
                <thead><tr><th>"class"</th><th>"score (logit)"</th><th>"probability"</th></tr></thead>
                <tbody>
                    {logits.iter().zip(probabilities.iter().chain(std::iter::repeat(&0.0))).enumerate().map(|(c, (&l, &p))| view! {
                        <tr>
                            <th>{c}</th>
                            <td class="logit">
                                <span class="logit-bar" class:negative=l < 0.0 style=format!("width: {:.1}%", 50.0 * l.abs() / scale)></span>
                                <span>{format!("{l:+.2}")}</span>
                            </td>
                            <td class="probability">
                                <span class="bar" style=format!("width: {:.1}%", 100.0 * p)></span>
                                <span>{format!("{:.1}%", 100.0 * p)}</span>
                            </td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        }
        .into_any()
    };
    let predicted = move || {
        told.reading.with(|r| {
            r.as_ref().map(|r| {
                let digit = r.predicted();
                format!(
                    "Here: a {digit}, at {:.1}%.",
                    100.0 * r.probabilities.get(digit).copied().unwrap_or(0.0)
                )
            })
        })
    };
    view! {
        <StepLayout testid="story-prediction" deeper=Part::HeadsMatter deeper_says="Which heads the answer depends on">
            <div class="story-picture">{bars}</div>
            <p class="story-words">
                "After the last block the class token goes through a LayerNorm and one linear layer, the head: ten scores, one a digit. "
                "The softmax turns them into probabilities that add up to 1: the prediction is the largest. "
                {predicted}
            </p>
        </StepLayout>
    }
}
