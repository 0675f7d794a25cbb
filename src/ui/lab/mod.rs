//! The lab's cards: draw, classify live, and look inside. They take what they share with the
//! page from context, a small part at a time (`Drawing`, `LabView`, ...), and ask the lab's services
//! (`ui/state/`: the drawing's classifications, the explaining worker, fine-tuning), which
//! are provided once for the whole page, so that a place left and come back to finds them as
//! they were. The places build the cards that show them: the first screen's three
//! ([`DrawCards`]), the experiments ([`ExperimentCards`]), the person's set
//! ([`HandwritingCards`]). What depends on the model's shape (the maps, the analysis) follows
//! the model.

mod analysis;
mod attention;
mod cnn_view;
mod draw_card;
mod draw_pad;
mod explain;
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

use crate::ui::state::{AppState, ModelHost, insight_of, provide_lab};
use crate::ui::widgets::Later;
use draw_card::DrawCard;
use handwriting::HandwritingCard;
use inside::{Inside, MapShape, WhereItLooks};
use prediction::PredictionCard;

/// The first screen: the pad, the prediction, and where the model looks.
#[component]
pub fn DrawCards() -> impl IntoView {
    let insight = insight_of(expect_context::<ModelHost>());
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
    draw_card::read_the_example_on_first_look();
    let insight = insight_of(expect_context::<ModelHost>());
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
    provide_lab(expect_context::<AppState>());
    view! { <DrawCards /> }
}
