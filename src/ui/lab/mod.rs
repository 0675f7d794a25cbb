//! The lab: draw, classify live, and look inside. Everything here needs a loaded model; it
//! reads what it shares with the page from a [`crate::ui::state::LabState`] in context.

mod analysis;
mod attention;
mod classifier;
mod cnn_view;
mod draw_card;
mod draw_pad;
mod explain;
mod explainer;
mod inside;
mod occlusion;
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
use crate::ui::state::LabState;
use classifier::Classifier;
use draw_card::DrawCard;
use inside::Inside;
use prediction::PredictionCard;

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
