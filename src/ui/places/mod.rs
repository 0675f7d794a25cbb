//! The places of the page (`crate::place`), each a view of cards over the page's services:
//! built when it is opened and dropped when another is, so a place not shown costs nothing
//! (no card, no worker of its own), while what a person did there (the drawing, a run, heads
//! switched off, their digits) lives in the services and is there again when they come back.

use leptos::prelude::*;

mod model_choice;

use model_choice::ModelChoice;

use crate::place::{Address, Part, Place};
use crate::ui::inductive_bias::InductiveBias;
use crate::ui::lab::{DrawCards, ExperimentCards, HandwritingCards};
use crate::ui::runs::RunsPanel;
use crate::ui::state::{AppState, Below, Drawing, ModelHost, Revealed};
use crate::ui::story::StoryCard;
use crate::ui::training::TrainingPanel;

/// The place `place`'s view.
pub fn place_view(place: Place, first_screen_end: NodeRef<leptos::html::Div>) -> AnyView {
    match place {
        Place::Draw => view! { <DrawPlace first_screen_end=first_screen_end /> }.into_any(),
        Place::Train => view! { <Lead place=place /><TrainingPanel /> }.into_any(),
        Place::Runs => view! { <Lead place=place /><RunsPanel /> }.into_any(),
        Place::Experiments => view! { <ExperimentsPlace /> }.into_any(),
        Place::Handwriting => view! {
            <Lead place=place />
            <ModelChoice />
            <HandwritingCards />
        }
        .into_any(),
    }
}

/// The sentence a place opens with.
#[component]
fn Lead(place: Place) -> impl IntoView {
    view! { <p class="place-lead" data-testid="place-lead">{place.lead()}</p> }
}

/// The pad, the prediction and where it looks; the story under them once the page has the
/// room (the visitor heads for it, or the page is quiet).
#[component]
fn DrawPlace(first_screen_end: NodeRef<leptos::html::Div>) -> impl IntoView {
    let story = expect_context::<Revealed>().when(Below::Story);
    view! {
        <Lead place=Place::Draw />
        <ModelChoice />
        <DrawCards />
        <div class="first-screen-end" node_ref=first_screen_end aria-hidden="true"></div>
        {move || story.get().then(|| view! { <StoryCard /> })}
    }
}

/// The experiments, with a line of contents (an overview first, then each in detail), and
/// the one action that gives them a digit while there is none.
#[component]
fn ExperimentsPlace() -> impl IntoView {
    let app = expect_context::<AppState>();
    let drawing = expect_context::<Drawing>();
    let host = expect_context::<ModelHost>();
    view! {
        <Lead place=Place::Experiments />
        <nav class="contents" aria-label="the experiments">
            {Part::EXPERIMENTS.map(|part| view! {
                <a href=Address::part(part).fragment()>{part.name()}</a>
            }).collect_view()}
        </nav>
        <ModelChoice />
        {move || drawing.model_input.with(Option::is_none).then(|| view! {
            <div class="chart-empty" data-testid="experiments-need-a-digit">
                <p>"The experiments read the digit on the pad: draw one in Draw, or take a test digit here."</p>
                {move || host.engine.with(Option::is_some).then(|| view! {
                    <button class="primary" data-testid="experiments-random-digit" on:click=move |_| app.show_random_digit()>"Show a random test digit"</button>
                })}
            </div>
        })}
        <div class="lab">
            <ExperimentCards />
            <InductiveBias />
        </div>
    }
}
