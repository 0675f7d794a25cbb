//! The lab: draw, classify live, and look inside. It reads what it shares with the page from
//! a [`crate::ui::state::LabState`] in context. Its services (the drawing's classifications,
//! the explaining worker) are provided once for the whole page ([`provide_lab`]), so that a
//! place left and come back to finds them as they were; its cards are built by the places
//! that show them: the first screen's three ([`DrawCards`]), the experiments
//! ([`ExperimentCards`]), the person's set ([`HandwritingCards`]). What depends on the model's
//! shape (the maps, the analysis) follows the model, and a new model reads the drawing on the
//! pad again.

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
pub use classifier::Classifications;
pub use cnn_view::CnnView;
pub use draw_pad::DrawPad;
pub use prediction::Prediction;
pub use timeline::AttentionTimeline;

use crate::ui::state::LabState;
use crate::ui::widgets::Later;
use draw_card::DrawCard;
use explainer::Explainer;
use handwriting::HandwritingCard;
use inside::{Inside, MapShape, WhereItLooks};
use prediction::PredictionCard;

/// The lab's services, provided once for every place: the classifications of the model's
/// input and the explaining worker (started on first use), and what keeps the reading in
/// step with the input, the model and the heads switched off, whichever place is shown.
pub fn provide_lab(lab: LabState) -> Classifications {
    let classifier = Classifications::new(lab);
    provide_context(classifier);
    provide_context(Explainer::new(lab));
    provide_context(fine_tune::FineTuneCard::new());
    // A test digit goes to the model as it is, where a drawing goes through preprocessing.
    Effect::new(move |_| {
        if let Some(shown) = lab.shown_digit.get() {
            classifier.classify(Some(shown.image));
        }
    });
    // What the weights show changes only with other weights, not when the same weights move
    // to another backend.
    let insight = insight_of(lab);
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
    classifier
}

/// What the weights in use show, changed only by other weights.
pub fn insight_of(lab: LabState) -> Memo<Option<crate::analysis::inference::ModelInsight>> {
    Memo::new(move |_| {
        lab.engine
            .with(|engine| engine.as_ref().map(|e| e.insight.clone()))
    })
}

/// The first screen: the pad, the prediction, and where the model looks.
#[component]
pub fn DrawCards() -> impl IntoView {
    let lab = expect_context::<LabState>();
    let insight = insight_of(lab);
    // The heatmap card is rebuilt only for a model of another shape.
    let shape = Memo::new(move |_| insight.with(|insight| MapShape::of(insight.as_ref())));
    view! {
        <div class="lab">
            // A task each on arrival (`Later`): the three cards' build was the first load's
            // longest task.
            <Later><DrawCard /></Later>
            <Later><PredictionCard /></Later>
            <Later>{move || shape.get().map(|shape| view! { <WhereItLooks shape=shape /> })}</Later>
        </div>
    }
}

/// The experiments on the drawing and the weights in use: a ViT's four cards, or what a CNN
/// builds in.
#[component]
pub fn ExperimentCards() -> impl IntoView {
    let insight = insight_of(expect_context::<LabState>());
    move || {
        insight
            .get()
            .map(|insight| view! { <Inside insight=insight /> })
    }
}

/// The person's own set, and the model fine-tuned on it.
#[component]
pub fn HandwritingCards() -> impl IntoView {
    view! {
        <section class="card wide" data-testid="handwriting-card">
            <h2>"Your handwriting"</h2>
            <HandwritingCard />
        </section>
    }
}

/// The services and the first screen together, as the browser tests mount the lab.
#[component]
pub fn Lab() -> impl IntoView {
    provide_lab(expect_context::<LabState>());
    view! { <DrawCards /> }
}
