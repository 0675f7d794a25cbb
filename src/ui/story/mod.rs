//! "How the ViT reads your digit": the paper's path (Eq. 1–4) step by step, on the drawing the
//! person has just made, following it as they draw. Every picture is computed from the model's
//! own values for this input (`analysis::story`, from the CPU's drawing worker, and the
//! drawing's reading), for any weights the lab uses; a CNN's story says what it has instead.
//!
//! Laid out as Transformer Explainer draws GPT-2: the whole path as one row of steps, left to
//! right, and the chosen step's detail under it (CNN Explainer's overview, then one layer):
//! its picture, one or two sentences, and a link to the experiment that goes deeper. The
//! steps are tabs: the arrow keys step through them, and each has an address
//! (`#draw/<step>`, `crate::place`).

mod cnn;
mod patch_picker;
mod steps;
mod strip;
mod teller;

use std::sync::Arc;

use leptos::prelude::*;

use crate::analysis::inference::{ModelInsight, WeightInsight};
use crate::analysis::reading::Reading;
use crate::analysis::story::{Story, most_attended};
use crate::model::VitConfig;
use crate::place::{Address, Part, StoryStep};
use crate::ui::state::{AppState, Classifications, Drawing, ModelHost, insight_of};
use crate::web;
use teller::StoryTeller;

/// What every step of a ViT's story reads, shared through context.
#[derive(Clone, Copy)]
pub(super) struct Told {
    pub config: StoredValue<VitConfig>,
    pub insight: StoredValue<Arc<WeightInsight>>,
    /// The image the reading and the story are of.
    pub input: Signal<Option<Vec<u8>>>,
    pub reading: Signal<Option<Arc<Reading>>>,
    /// The story of the newest reading, once the worker has told it.
    pub story: Signal<Option<Arc<Story>>>,
    /// The patch the person picked; until they do, the one the rollout weighs most.
    pub picked: RwSignal<Option<usize>>,
    /// The layer the attention step shows, from 0.
    pub layer: RwSignal<usize>,
}

impl Told {
    /// The patch the steps follow (tracked).
    pub fn patch(self) -> usize {
        self.picked.get().unwrap_or_else(|| {
            self.reading
                .with(|r| r.as_ref().map_or(0, |r| most_attended(&r.rollout)))
        })
    }

    pub fn patches(self) -> usize {
        self.config.with_value(|c| c.grid_size() * c.grid_size())
    }
}

/// The story card, for the model in use.
#[component]
pub fn StoryCard() -> impl IntoView {
    let app = expect_context::<AppState>();
    let insight = insight_of(expect_context::<ModelHost>());
    let step = RwSignal::new(match app.address.get_untracked().part {
        Some(Part::Story(step)) => step,
        _ => StoryStep::default(),
    });
    // A link to a step, followed while the card is shown.
    Effect::new(move |_| {
        if let Some(Part::Story(linked)) = app.address.get().part {
            step.set(linked);
        }
    });
    view! {
        <section class="card wide story" id="story" tabindex="-1" data-testid="story"
            data-step=move || step.get().slug()>
            <h2>"How the ViT reads your digit"</h2>
            <p class="story-lead">"Follow your drawing through the model, one step at a time: each picture is this model's own numbers for what you drew."</p>
            {move || insight.get().map(|insight| match insight {
                ModelInsight::Vit(config, weights) => view! { <VitStory config=config insight=Arc::new(weights) step=step /> }.into_any(),
                ModelInsight::Cnn(insight) => view! { <cnn::CnnStory insight=insight step=step /> }.into_any(),
            })}
        </section>
    }
}

/// A ViT's story: the steps, and the one chosen.
#[component]
fn VitStory(
    config: VitConfig,
    insight: Arc<WeightInsight>,
    step: RwSignal<StoryStep>,
) -> impl IntoView {
    let drawing = expect_context::<Drawing>();
    let host = expect_context::<ModelHost>();
    let classifier = expect_context::<Classifications>();
    let teller = StoryTeller::new(drawing, host, classifier);
    let told = Told {
        config: StoredValue::new(config),
        insight: StoredValue::new(insight),
        input: teller.input.into(),
        reading: classifier.result.into(),
        story: Signal::derive(move || teller.story.with(|s| s.as_ref().map(|(_, s)| s.clone()))),
        picked: RwSignal::new(None),
        layer: RwSignal::new(0),
    };
    provide_context(told);
    let failed = teller.failed;
    // Rebuilt only when a drawing comes or goes, not at every reading of one.
    let drawn = Memo::new(move |_| told.input.with(Option::is_some));
    view! {
        {move || match drawn.get() {
            // Before a drawing: the path at a glance, and the one action that fills it.
            false => view! { <StepsAhead /><NothingDrawn /> }.into_any(),
            true => view! {
                <Stepper step=step />
                <div class="story-panel" role="tabpanel" id="story-panel"
                    aria-labelledby=move || tab_id(step.get()) data-ready=move || teller.caught_up().to_string()>
                    {move || steps::step_view(step.get())}
                    {move || failed.get().map(|why| view! { <p class="error" role="alert">{format!("The story could not be told: {why}.")}</p> })}
                    <StepButtons step=step />
                </div>
            }.into_any(),
        }}
    }
}

/// The steps to come, before there is a drawing to follow through them: their names, nothing
/// to press.
#[component]
pub(super) fn StepsAhead() -> impl IntoView {
    view! {
        <ol class="story-steps story-ahead" aria-label="the steps of the story">
            {StoryStep::ALL.map(|each| view! {
                <li><span class="story-number">{each.number()}</span><span class="story-title">{each.title()}</span></li>
            }).collect_view()}
        </ol>
    }
}

/// What the story waits for, and the one action that brings it without drawing (once the
/// model that holds the test digits is in).
#[component]
pub(super) fn NothingDrawn() -> impl IntoView {
    let app = expect_context::<AppState>();
    let host = app.host;
    view! {
        <div class="chart-empty" data-testid="story-empty">
            <p>"Draw a digit on the pad above, and its path through the model shows here, step by step, as you draw."</p>
            {move || host.engine.with(Option::is_some).then(|| view! {
                <button class="primary" data-testid="story-random-digit" on:click=move |_| app.show_random_digit()>"Or show a random test digit"</button>
            })}
        </div>
    }
}

fn tab_id(step: StoryStep) -> String {
    format!("story-tab-{}", step.slug())
}

/// The steps as one row of tabs: the model's path at a glance, one of them chosen; the arrow
/// keys, Home and End move along it.
#[component]
pub(super) fn Stepper(step: RwSignal<StoryStep>) -> impl IntoView {
    let choose = move |chosen: StoryStep, focus: bool| {
        step.set(chosen);
        web::address::replace(&Address::part(Part::Story(chosen)).fragment());
        if focus {
            web::address::focus(&tab_id(chosen));
        }
    };
    let on_key = move |event: leptos::ev::KeyboardEvent| {
        let now = step.get_untracked();
        let next = match event.key().as_str() {
            "ArrowRight" | "ArrowDown" => now.next(),
            "ArrowLeft" | "ArrowUp" => now.previous(),
            "Home" => StoryStep::Input,
            "End" => StoryStep::Head,
            _ => return,
        };
        event.prevent_default();
        choose(next, true);
    };
    view! {
        <ol class="story-steps" role="tablist" aria-label="the steps of the story" on:keydown=on_key>
            {StoryStep::ALL.map(|each| view! {
                <li role="presentation">
                    <button role="tab" id=tab_id(each) aria-controls="story-panel" data-step=each.slug()
                        aria-selected=move || (step.get() == each).to_string()
                        tabindex=move || if step.get() == each { "0" } else { "-1" }
                        on:click=move |_| choose(each, false)>
                        <span class="story-number">{each.number()}</span>
                        <span class="story-title">{each.title()}</span>
                    </button>
                </li>
            }).collect_view()}
        </ol>
    }
}

/// Previous and next, with where the story is: the touch screen's arrow keys.
#[component]
pub(super) fn StepButtons(step: RwSignal<StoryStep>) -> impl IntoView {
    let go = move |to: StoryStep| {
        step.set(to);
        web::address::replace(&Address::part(Part::Story(to)).fragment());
    };
    let last = StoryStep::ALL.len();
    view! {
        <div class="story-nav">
            <button data-testid="story-previous" class:gone=move || step.get() == StoryStep::Input
                on:click=move |_| go(step.get_untracked().previous())>"‹ Previous"</button>
            <span class="caption">{move || format!("step {} of {last}", step.get().number())}</span>
            <button data-testid="story-next" class:gone=move || step.get() == StoryStep::Head
                on:click=move |_| go(step.get_untracked().next())>"Next ›"</button>
        </div>
    }
}
