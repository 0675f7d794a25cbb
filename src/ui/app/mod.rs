//! The page's shell: it reads the link, starts the model (on the CPU at once; on WebGPU too
//! where the browser has it and it proves faster), shares the page's state through context,
//! and lays out the lab, the comparison with a CNN, training and the runs.

mod header;
mod model_choice;
mod offline_note;
mod start;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::share::Experiment;
use crate::shipped::DEFAULT_WEIGHTS;
use crate::ui::inductive_bias::InductiveBias;
use crate::ui::lab::Lab;
use crate::ui::runs::RunsPanel;
use crate::ui::state::AppState;
use crate::ui::training::TrainingPanel;
use crate::ui::widgets::ErrorBanner;
use crate::web::{self, BackendKind};
use header::Header;
use model_choice::ModelChoice;
use offline_note::{Offline, OfflineNote};

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let preferred = web::query_param("backend").and_then(|text| BackendKind::parse(&text));
    let weights_url = web::query_param("weights").unwrap_or_else(|| DEFAULT_WEIGHTS.to_string());
    let (experiment, link_problems) = Experiment::read_query(&web::query());
    let app = AppState::new(preferred, &weights_url, experiment.map.unwrap_or_default());
    if !link_problems.is_empty() {
        app.show_error(format!("The link: {}.", link_problems.join("; ")));
    }
    app.keeper.load();
    provide_context(app);
    provide_context(app.lab());
    let offline = RwSignal::new(Offline::Preparing);
    spawn_local(async move {
        start::start(app, weights_url).await;
        offline_note::keep_for_offline(offline).await;
    });

    view! {
        <Header />
        <main>
        <ErrorBanner error=app.error />
        {move || (!app.status.get().is_empty()).then(|| view! { <p class="status" data-testid="status">{app.status.get()}</p> })}
        <ModelChoice />
        <LabOfTheModel />
        <InductiveBias />
        <TrainingPanel initial_plan=experiment.plan />
        <RunsPanel />
        </main>
        <footer>
            <OfflineNote offline />
            <p>"MNIST by Yann LeCun and Corinna Cortes, CC BY-SA 3.0. Model: Dosovitskiy et al., ICLR 2021."</p>
        </footer>
    }
}

/// The lab, once a model is loaded. Rebuilt when other weights come in (their grid and depth
/// may differ), not when the same weights move to another backend.
#[component]
fn LabOfTheModel() -> impl IntoView {
    let host = expect_context::<AppState>().host;
    move || {
        host.generation.get();
        host.engine.get_untracked().map(|_| view! { <Lab /> })
    }
}
