//! The lab: draw, classify live, and look inside. It reads what it shares with the page from
//! a [`crate::ui::state::LabState`] in context. The pad and the prediction are there from the
//! first paint; what depends on the model's shape (the maps, the analysis) follows the model,
//! and a new model reads the drawing on the pad again.

mod analysis;
mod attention;
mod classifier;
mod cnn_view;
mod draw_card;
mod draw_pad;
mod explain;
mod explainer;
mod fine_tune;
mod handwriting;
mod heads_matter;
mod heads_off;
mod inside;
mod occlusion;
mod prediction;
mod question;
mod timeline;

use leptos::prelude::*;

pub use analysis::AnalysisView;
pub use attention::AttentionView;
pub use cnn_view::CnnView;
pub use draw_pad::DrawPad;
pub use prediction::Prediction;
pub use timeline::AttentionTimeline;

use crate::ui::state::{Below, LabState};
use classifier::Classifications;
use draw_card::DrawCard;
use handwriting::HandwritingCard;
use inside::{Inside, MapShape, WhereItLooks};
use prediction::PredictionCard;

/// Draw, classify live, and look inside.
#[component]
pub fn Lab() -> impl IntoView {
    let lab = expect_context::<LabState>();
    let classifier = Classifications::new(lab);
    provide_context(classifier);
    // A test digit goes to the model as it is, where a drawing goes through preprocessing.
    Effect::new(move |_| {
        if let Some(shown) = lab.shown_digit.get() {
            classifier.classify(Some(shown.image));
        }
    });
    // What the weights show changes only with other weights, not when the same weights move
    // to another backend.
    let insight = Memo::new(move |_| {
        lab.engine
            .with(|engine| engine.as_ref().map(|e| e.insight.clone()))
    });
    // Other weights read what is on the pad again (their maps may have another shape: the
    // old result goes first).
    Effect::new(move |before: Option<()>| {
        insight.track();
        if before.is_some() {
            classifier.result.set(None);
            classifier.classify(lab.model_input.get_untracked());
        }
    });
    // Heads switched off or back on: the image is read again (unless what the model reads
    // does not change, as with another replacement for no heads).
    Effect::new(move |before: Option<()>| {
        lab.heads_off.track();
        if before.is_some() {
            classifier.reclassify();
        }
    });
    // Heads that a new model does not have are dropped (a link's heads are kept for the
    // link's model).
    Effect::new(move |_| {
        let config = lab
            .engine
            .with(|engine| engine.as_ref().and_then(|e| e.config.vit().cloned()));
        if let Some(config) = config
            && !lab.heads_off.with_untracked(|off| off.fits(&config))
        {
            lab.heads_off.update(|off| *off = off.within(&config));
        }
    });
    let handwriting_shown = lab.revealed.when(Below::Handwriting);
    // The heatmap card is rebuilt only for a model of another shape.
    let shape = Memo::new(move |_| insight.with(|insight| MapShape::of(insight.as_ref())));
    view! {
        <div class="lab">
            <DrawCard />
            <PredictionCard />
            {move || shape.get().map(|shape| view! { <WhereItLooks shape=shape /> })}
            {move || insight.get().map(|insight| view! { <Inside insight=insight /> })}
            {move || handwriting_shown.get().then(|| view! {
                <section class="card wide" data-testid="handwriting-card">
                    <h2>"Your handwriting"</h2>
                    <HandwritingCard />
                </section>
            })}
        </div>
    }
}
