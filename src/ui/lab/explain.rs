//! Beyond rollout: the gradient relevance of Chefer et al. for the predicted class or one
//! picked, beside rollout, and the logit lens (what the class token would say after each
//! block). Computed in a worker of its own on the backend the page draws on, once a drawing
//! has been classified and has settled: never on the drawing's path.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::classifier::Classifications;
use super::explainer::{ExplainError, Explainer};
use crate::analysis::explanation::Explanation;
use crate::analysis::reading::Reading;
use crate::data::IMAGE_PIXELS;
use crate::ui::state::{LabState, Newest, WhenSettled};
use crate::ui::widgets::{
    HeatCanvas, Palette, SaveFailed, Sheet, SheetButtons, Tile, offer_download,
};

/// Where the explanation of the newest drawing stands.
#[derive(Debug, Clone, PartialEq)]
enum ExplanationState {
    Waiting,
    Computing,
    Ready(Arc<Explanation>),
    Failed(ExplainError),
}

#[component]
pub(super) fn Explanations(grid: usize, depth: usize) -> impl IntoView {
    let lab = expect_context::<LabState>();
    let result = expect_context::<Classifications>().result;
    let class = RwSignal::new(None::<u8>);
    let shown = RwSignal::new(ExplanationState::Waiting);
    let explainer = expect_context::<Explainer>();
    let newest = Newest::new();
    // Rollout beside the relevance, taken when the drawing has settled.
    let rollout = RwSignal::new(Vec::<f32>::new());
    // Once the drawing is classified and stays so for a moment, or another class is picked.
    let when_settled = WhenSettled::new();
    Effect::new(move |_| {
        let classified = result.get().is_some();
        let class = class.get();
        let image = lab.input.get_untracked();
        when_settled.cancel();
        let Some(image) = image.filter(|_| classified) else {
            shown.set(ExplanationState::Waiting);
            rollout.set(Vec::new());
            return;
        };
        let Ok(image) = <[u8; IMAGE_PIXELS]>::try_from(image) else {
            return;
        };
        let backend = explainer.backend();
        when_settled.run(move || {
            let ticket = newest.ticket();
            shown.set(ExplanationState::Computing);
            rollout.set(
                result
                    .get_untracked()
                    .map(|r: Arc<Reading>| r.rollout.clone())
                    .unwrap_or_default(),
            );
            spawn_local(async move {
                let answer = explainer
                    .ask(false, |worker| async move {
                        worker.explain(&image, backend, class).await
                    })
                    .await;
                if ticket.is_newest() {
                    shown.set(match answer {
                        Ok(explanation) => ExplanationState::Ready(Arc::new(explanation)),
                        Err(why) => ExplanationState::Failed(why),
                    });
                }
            });
        });
    });
    let save_failed = RwSignal::new(false);
    let ready = move || match shown.get() {
        ExplanationState::Ready(explanation) => Some(explanation),
        _ => None,
    };
    let relevance =
        Signal::derive(move || ready().map(|e| e.relevance.clone()).unwrap_or_default());
    let maps = Callback::new(move |()| {
        let ExplanationState::Ready(explanation) = shown.get_untracked() else {
            return None;
        };
        Some(Sheet {
            title: format!(
                "Rollout beside gradient relevance for class {}",
                explanation.class
            ),
            tiles: vec![
                Tile {
                    label: "attention rollout".into(),
                    values: rollout.get_untracked(),
                    grid,
                    palette: Palette::Heat,
                },
                Tile {
                    label: format!("relevance for class {}", explanation.class),
                    values: explanation.relevance.clone(),
                    grid,
                    palette: Palette::Heat,
                },
            ],
            columns: 2,
            numbers: false,
        })
    });
    view! {
        <div class="explanations" data-testid="explanations" data-state=move || match shown.get() {
            ExplanationState::Waiting => "waiting",
            ExplanationState::Computing => "computing",
            ExplanationState::Ready(_) => "ready",
            ExplanationState::Failed(_) => "failed",
        }>
            <div class="explain-maps">
                <figure>
                    <HeatCanvas values=rollout grid=grid size=140 title="attention rollout" />
                    <figcaption>"attention rollout"</figcaption>
                </figure>
                <figure>
                    <HeatCanvas values=relevance grid=grid size=140 title="gradient relevance" />
                    <figcaption data-testid="relevance-caption">{move || match ready() {
                        Some(e) => format!("gradient relevance for {}", e.class),
                        None => "gradient relevance".into(),
                    }}</figcaption>
                </figure>
            </div>
            <label class="explain-class">"Relevance for "
                <select data-testid="relevance-class" on:change=move |ev| {
                    class.set(event_target_value(&ev).parse::<u8>().ok());
                }>
                    <option value="predicted" selected=true>"the predicted class"</option>
                    {(0..10u8).map(|d| view! { <option value=d.to_string()>{format!("class {d}")}</option> }).collect_view()}
                </select>
            </label>
            <p class="hint">{move || match shown.get() {
                ExplanationState::Waiting => "Draw a digit to explain it.".to_string(),
                ExplanationState::Computing => "Explaining…".to_string(),
                ExplanationState::Ready(_) => "Relevance: each attention weight times the class score's gradient with respect to it, positive part, heads averaged, carried through the layers (Chefer et al., 2021). Unlike rollout it depends on the class.".to_string(),
                ExplanationState::Failed(why) => format!("The explanation failed: {why}."),
            }}</p>
            <LogitLens explanation=Signal::derive(ready) depth=depth />
            <div class="buttons">
                <span>"Both maps: "<SheetButtons sheet=maps name="explanation-maps" ready=Signal::derive(move || ready().is_some()) /></span>
                <button data-testid="lens-csv" prop:disabled=move || ready().is_none() on:click=move |_| {
                    let csv = ready().map(|e| e.lens_csv());
                    save_failed.set(csv.is_none_or(|csv| offer_download(csv.as_bytes(), "vitlab-logit-lens.csv").is_err()));
                }>"Logit lens as CSV"</button>
                <SaveFailed failed=save_failed />
            </div>
        </div>
    }
}

/// Per block: the class the class token would predict there, and how sure.
#[component]
fn LogitLens(explanation: Signal<Option<Arc<Explanation>>>, depth: usize) -> impl IntoView {
    view! {
        <table class="logit-lens" data-testid="logit-lens">
            <caption>"Logit lens: the final LayerNorm and head read the class token after each block"</caption>
            <thead><tr><th>"after block"</th><th>"reads"</th><th>"probability"</th></tr></thead>
            <tbody>
                {(0..depth).map(|block| {
                    let top = move || explanation.get().and_then(|e| e.lens_tops().get(block).copied());
                    view! {
                        <tr data-testid="lens-row">
                            <td>{block + 1}</td>
                            <td data-testid="lens-class">{move || top().map_or("–".into(), |(c, _)| c.to_string())}</td>
                            <td>{move || top().map_or("–".into(), |(_, p)| format!("{:.1}%", 100.0 * p))}</td>
                        </tr>
                    }
                }).collect_view()}
            </tbody>
        </table>
    }
}
