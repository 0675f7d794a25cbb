//! The page's shell: it reads the link, starts the model (in the CPU's drawing worker at once;
//! on WebGPU too, once the page is quiet, where the browser has it and it proves faster),
//! shares the page's state through context, and lays out the lab, the comparison with a CNN,
//! training and the runs. The first screen (the header, the pad, the prediction and the
//! heatmaps) is laid out at its final size from the first paint (`index.html` paints it before
//! the app arrives, and its header stays); the rest of the page comes in below it once the
//! model is in, so nothing on screen moves.

mod backend_lines;
mod model_choice;
mod offline_note;
mod start;

use futures::FutureExt;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::protocol::BackendKind;
use crate::share::Experiment;
use crate::share::View;
use crate::shipped::DEFAULT_WEIGHTS;
use crate::ui::inductive_bias::InductiveBias;
use crate::ui::lab::Lab;
use crate::ui::runs::RunsPanel;
use crate::ui::state::{AppState, Below, FineTuning, Handwriting};
use crate::ui::training::TrainingPanel;
use crate::ui::widgets::ErrorBanner;
use crate::web;
use backend_lines::BackendLines;
use model_choice::ModelChoice;
use offline_note::{Offline, OfflineNote};

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let preferred = web::query_param("backend").and_then(|text| BackendKind::parse(&text));
    let weights_url = web::query_param("weights").unwrap_or_else(|| DEFAULT_WEIGHTS.to_string());
    let (experiment, link_problems) = Experiment::read_query(&web::query());
    let view = View {
        map: experiment.map.unwrap_or_default(),
        heads_off: experiment.heads_off.unwrap_or_default(),
    };
    let app = AppState::new(preferred, &weights_url, view);
    if !link_problems.is_empty() {
        app.show_error(format!("The link: {}.", link_problems.join("; ")));
    }
    app.keeper.load();
    provide_context(app);
    provide_context(app.lab());
    provide_context(Handwriting::new());
    provide_context(FineTuning::new());
    let offline = RwSignal::new(Offline::Preparing);
    let first_screen_end = NodeRef::<leptos::html::Div>::new();
    spawn_local(async move {
        // A task after the mount: starting the drawing worker and the weights' fetch is not
        // added to the mount's, the longest task of the first load.
        web::sleep_ms(0).await;
        let weights = start::start(app, weights_url).await;
        // The model is in, or start-up gave up: the rest of the page comes in below once the
        // visitor heads for it (scrolls toward it, or takes to the keyboard, whose Tab must
        // reach it) or the page has been quiet a while, never beside the first load.
        let headed_below = async move {
            match first_screen_end.get_untracked() {
                Some(edge) => web::when_visible(&edge).await,
                None => std::future::pending().await,
            }
        };
        let keyboard = web::when_key_pressed();
        let quiet = web::when_idle(REVEAL_QUIET_MS);
        futures::future::select_all([
            headed_below.boxed_local(),
            keyboard.boxed_local(),
            quiet.boxed_local(),
        ])
        .await;
        app.revealed.reveal_all().await;
        if let Some(weights) = weights {
            spawn_local(start::time_webgpu(app, weights));
        }
        // Never beside the first load: once the page is interactive and has been quiet.
        web::when_idle(OFFLINE_QUIET_MS).await;
        offline_note::keep_for_offline(offline).await;
    });
    let initial_plan = StoredValue::new(experiment.plan);
    let [bias, training, runs, footer] = [
        Below::InductiveBias,
        Below::Training,
        Below::Runs,
        Below::Footer,
    ]
    .map(|part| app.revealed.when(part));

    view! {
        <BackendLines />
        <main>
        <ErrorBanner error=app.error />
        <ModelChoice />
        <Lab />
        <div class="first-screen-end" node_ref=first_screen_end aria-hidden="true"></div>
        {move || bias.get().then(|| view! { <InductiveBias /> })}
        {move || training.get().then(|| view! { <TrainingPanel initial_plan=initial_plan.get_value() /> })}
        {move || runs.get().then(|| view! { <RunsPanel /> })}
        </main>
        {move || footer.get().then(|| view! {
            <footer>
                <OfflineNote offline />
                <p>"MNIST by Yann LeCun and Corinna Cortes, CC BY-SA 3.0. Model: Dosovitskiy et al., ICLR 2021."</p>
            </footer>
        })}
    }
}

/// How long the page stays quiet after it has loaded before the service worker keeps its
/// files for offline use (the page's and both workers', about 4 MB).
const OFFLINE_QUIET_MS: u32 = 5_000;

/// How long the page stays quiet after the model is in before the parts below the first screen
/// come in unasked: building them is most of the first load's main-thread work (Lighthouse's
/// mobile TBT 450-930 ms with them at once, on this machine), and a visitor who scrolls gets
/// them at once.
const REVEAL_QUIET_MS: u32 = 3_000;
