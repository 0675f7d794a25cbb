//! The lab: draw, classify live, and look inside. Everything here needs a loaded model; it
//! reads what it shares with the page from a [`LabState`] in context.

mod analysis;
mod attention;
mod classifier;
mod cnn_view;
mod draw_card;
mod draw_pad;
mod inside;
mod prediction;
mod timeline;

use leptos::prelude::*;

pub use analysis::AnalysisView;
pub use attention::AttentionView;
pub use cnn_view::CnnView;
pub use draw_pad::DrawPad;
pub use prediction::Prediction;
pub use timeline::AttentionTimeline;

use crate::analysis::MapChoice;
use crate::analysis::inference::ModelInsight;
use crate::protocol::BackendKind;
use crate::ui::model::{EngineSignal, ShownDigit, TestDigits};
use crate::web::EngineError;
use classifier::Classifier;
use draw_card::DrawCard;
use inside::Inside;
use prediction::PredictionCard;

/// What the lab shares with the page, provided as context before a [`Lab`] is built.
#[derive(Clone, Copy)]
pub struct LabState {
    pub engine: EngineSignal,
    /// Told where a classification failed and why, e.g. because the GPU was lost; answers
    /// whether the model now runs elsewhere, to classify the drawing again there.
    pub on_failure: Callback<(BackendKind, EngineError), bool>,
    /// Told of any other problem, to show it (the model in use stays where it is).
    pub on_problem: Callback<String>,
    /// Mean attention distance over a batch of test digits, when known.
    pub batch_distance: Signal<Option<Vec<Vec<f32>>>>,
    /// Where a random test digit comes from.
    pub test_digits: TestDigits,
    /// A test digit shown in the draw panel instead of a drawing, set from anywhere.
    pub digit: RwSignal<Option<ShownDigit>>,
    /// The attention map shown large (a link may set it).
    pub map: RwSignal<MapChoice>,
    /// The image the model is given: the drawing, or a test digit (the training run probes
    /// it too).
    pub input: RwSignal<Option<Vec<u8>>>,
}

/// Draw, classify live, and look inside: everything that needs a loaded model.
#[component]
pub fn Lab() -> impl IntoView {
    let lab = expect_context::<LabState>();
    let Some(first) = lab.engine.get_untracked() else {
        return view! { <p>"No model loaded."</p> }.into_any();
    };
    let insight = first.insight.clone();
    // Other weights may have fewer layers or heads than the map asks for.
    if let ModelInsight::Vit(config, _) = &insight
        && !lab.map.get_untracked().fits(config.depth, config.heads)
    {
        lab.map.set(MapChoice::Rollout);
    }
    let classifier = Classifier::new(lab);
    provide_context(classifier);
    // A test digit goes to the model as it is, where a drawing goes through preprocessing.
    Effect::new(move |_| {
        if let Some(shown) = lab.digit.get() {
            classifier.classify(Some(shown.image));
        }
    });
    view! {
        <div class="lab">
            <DrawCard />
            <PredictionCard />
            <Inside insight=insight />
        </div>
    }
    .into_any()
}
