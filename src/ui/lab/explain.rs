//! Beyond rollout: the gradient relevance of Chefer et al. for the predicted class or one
//! picked, beside rollout, and the logit lens (what the class token would say after each
//! block). Computed in a worker of its own on the backend the page draws on, once a drawing
//! has been classified and has settled: never on the drawing's path.

use std::sync::Arc;

use leptos::prelude::*;

use super::question::{Answer, Question};
use crate::analysis::explanation::Explanation;
use crate::data::IMAGE_PIXELS;
use crate::ui::state::{Classifications, Drawing};
use crate::ui::widgets::{Export, ExportButton, HeatCanvas, Palette, Sheet, SheetButtons, Tile};

/// What the hint under the maps says.
fn hint(answer: &Answer<Arc<Explanation>>) -> String {
    match answer {
        Answer::Waiting => "Draw a digit to explain it.".into(),
        Answer::Asking => "Explaining…".into(),
        Answer::Ready(_) => "Relevance: each attention weight times the class score's gradient with respect to it, positive part, heads averaged, carried through the layers (Chefer et al., 2021). Unlike rollout it depends on the class.".into(),
        Answer::Failed(why) => format!("The explanation failed: {why}."),
    }
}

/// Both maps as one figure: rollout beside the relevance.
fn maps_sheet(rollout: Vec<f32>, explanation: &Explanation, grid: usize) -> Sheet {
    let tile = |label: String, values: Vec<f32>| Tile {
        label,
        values,
        grid,
        palette: Palette::Heat,
    };
    Sheet {
        title: format!(
            "Rollout beside gradient relevance for class {}",
            explanation.class
        ),
        tiles: vec![
            tile("attention rollout".into(), rollout),
            tile(
                format!("relevance for class {}", explanation.class),
                explanation.relevance.clone(),
            ),
        ],
        columns: 2,
        numbers: false,
    }
}

#[component]
pub(super) fn Explanations(grid: usize, depth: usize) -> impl IntoView {
    let drawing = expect_context::<Drawing>();
    let result = expect_context::<Classifications>().result;
    let class = RwSignal::new(None::<u8>);
    let question = Question::<Arc<Explanation>>::new();
    // Rollout beside the relevance, taken when the drawing has settled.
    let rollout = RwSignal::new(Vec::<f32>::new());
    // Once the drawing is classified and stays so for a moment, or another class is picked.
    Effect::new(move |_| {
        let classified = result.get().is_some();
        let class = class.get();
        let image = drawing.model_input.get_untracked().filter(|_| classified);
        let Some(image) = image.and_then(|image| <[u8; IMAGE_PIXELS]>::try_from(image).ok()) else {
            question.forget();
            rollout.set(Vec::new());
            return;
        };
        question.when_settled(move || {
            rollout.set(
                result
                    .with_untracked(|r| r.as_ref().map(|r| r.rollout.clone()))
                    .unwrap_or_default(),
            );
            question.ask(false, move |worker, backend| async move {
                worker.explain(&image, backend, class).await.map(Arc::new)
            });
        });
    });
    let answer = question.answer();
    let ready = Signal::derive(move || answer.with(|a| a.ready().cloned()));
    let relevance =
        Signal::derive(move || ready.get().map(|e| e.relevance.clone()).unwrap_or_default());
    let maps = Callback::new(move |()| {
        ready
            .get_untracked()
            .map(|e| maps_sheet(rollout.get_untracked(), &e, grid))
    });
    let is_ready = Signal::derive(move || answer.with(|a| a.ready().is_some()));
    let no_digit = move || result.with(Option::is_none);
    view! {
        <div class="explanations" data-testid="explanations" data-state=move || answer.with(Answer::state)>
            {move || no_digit().then(|| view! {
                <p class="hint">"Rollout beside gradient relevance, and the logit lens, for the digit on the pad: draw one, or take a test digit above."</p>
            })}
            <div hidden=no_digit>
            <div class="explain-maps">
                <figure>
                    <HeatCanvas values=rollout grid=grid size=140 title="attention rollout" />
                    <figcaption>"attention rollout"</figcaption>
                </figure>
                <figure>
                    <HeatCanvas values=relevance grid=grid size=140 title="gradient relevance" />
                    <figcaption data-testid="relevance-caption">{move || match ready.get() {
                        Some(e) => format!("gradient relevance for {}", e.class),
                        None => "gradient relevance".into(),
                    }}</figcaption>
                </figure>
            </div>
            <ClassPicker class=class />
            <p class="hint">{move || answer.with(hint)}</p>
            <LogitLens explanation=ready depth=depth />
            <div class="buttons">
                <span hidden=move || !is_ready.get()>"Both maps: "<SheetButtons sheet=maps name="explanation-maps" ready=is_ready /></span>
                <ExportButton label="Logit lens as CSV" large=true testid="lens-csv" file="vitlab-logit-lens.csv" ready=is_ready
                    make=move || ready.get_untracked().map(|e| Export::text(e.lens_csv())) />
            </div>
            </div>
        </div>
    }
}

/// The class the relevance is for: the predicted one unless another is picked.
#[component]
fn ClassPicker(class: RwSignal<Option<u8>>) -> impl IntoView {
    view! {
        <label class="explain-class">"Relevance for "
            <select data-testid="relevance-class" on:change=move |ev| {
                class.set(event_target_value(&ev).parse::<u8>().ok());
            }>
                <option value="predicted" selected=true>"the predicted class"</option>
                {(0..10u8).map(|d| view! { <option value=d.to_string()>{format!("class {d}")}</option> }).collect_view()}
            </select>
        </label>
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
