//! The page's shell: it reads the link, starts the model (in the CPU's drawing worker at once;
//! on WebGPU too, once the page is quiet, where the browser has it and it proves faster),
//! provides the page's services through context, and shows the place the address names
//! (`crate::place`) under the navigation bar. The first screen (the header, the navigation,
//! the pad, the prediction and the heatmaps) is laid out at its final size from the first
//! paint (`index.html` paints it before the app arrives, and its header stays); the story
//! comes in below it once the model is in, so nothing on screen moves.

mod backend_lines;
mod nav;
mod offline_note;
mod start;

use futures::FutureExt;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::place::Address;
use crate::protocol::BackendKind;
use crate::share::Experiment;
use crate::share::View;
use crate::shipped::DEFAULT_WEIGHTS;
use crate::ui::places::place_view;
use crate::ui::state::{AppState, Below, Handwriting, PageProblem, provide_lab, provide_training};
use crate::ui::widgets::{ErrorBanner, Later};
use crate::web;
use backend_lines::BackendLines;
use nav::NavBar;
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
        app.show_error(PageProblem::Link(link_problems));
    }
    app.keeper.load();
    app.provide();
    provide_context(Handwriting::new());
    // The services every place asks, provided once: a place left and come back to finds the
    // drawing's reading, a run under way and the explaining worker as they were.
    provide_lab(app);
    provide_training(app, experiment.plan, experiment.cpu_workers);
    follow_the_address(app);
    let offline = RwSignal::new(Offline::Preparing);
    let first_screen_end = NodeRef::<leptos::html::Div>::new();
    spawn_local(async move {
        // A task after the mount: starting the drawing worker and the weights' fetch is not
        // added to the mount's, the longest task of the first load.
        web::next_task().await;
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
        // A link to a part below (a step of the story): it comes at once.
        let linked = async move {
            if app.address.get_untracked().part.is_none() {
                std::future::pending::<()>().await;
            }
        };
        futures::future::select_all([
            headed_below.boxed_local(),
            keyboard.boxed_local(),
            quiet.boxed_local(),
            linked.boxed_local(),
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
    let place = Memo::new(move |_| app.address.with(|a| a.place));
    let footer = app.revealed.when(Below::Footer);
    view! {
        <BackendLines />
        <NavBar />
        <main data-place=move || place.get().slug()>
            <ErrorBanner error=app.error />
            // The services above in one task of the arrival, the place in the next.
            <Later>{move || place_view(place.get(), first_screen_end)}</Later>
        </main>
        {move || footer.get().then(|| view! {
            <footer>
                <OfflineNote offline />
                <p>"MNIST by Yann LeCun and Corinna Cortes, CC BY-SA 3.0. Model: Dosovitskiy et al., ICLR 2021."</p>
            </footer>
        })}
    }
}

/// Keeps the page's address in step with the URL's fragment: a link followed, Back or Forward
/// opens its place at its top, or brings the part it names into view once it is built.
fn follow_the_address(app: AppState) {
    app.address.set(Address::read(&web::address::fragment()));
    let listener = web::address::on_fragment_change(move |fragment| {
        app.address.set(Address::read(&fragment));
    });
    // The page's own listener, for as long as the page.
    StoredValue::new_local(listener);
    Effect::new(move |before: Option<()>| {
        let address = app.address.get();
        // The first place opens where the browser put it.
        if before.is_none() && address.part.is_none() {
            return;
        }
        spawn_local(async move {
            // Once the place's cards are built.
            web::after_next_paint().await;
            let Some(part) = address.part else {
                return web::address::scroll_to_top();
            };
            // A part may come after the place: the story once the page has room for it, the
            // experiments once the model is in. Waited for a while, unless the address moves.
            let id = part.element_id();
            if web::address::when_built(id, PART_WAIT_MS).await
                && app.address.try_get_untracked() == Some(address)
            {
                web::address::bring_into_view(id);
            }
        });
    });
}

/// How long a link's part is waited for while its place builds itself.
const PART_WAIT_MS: u32 = 15_000;

/// How long the page stays quiet after it has loaded before the service worker keeps its
/// files for offline use (the page's and both workers', about 4 MB).
const OFFLINE_QUIET_MS: u32 = 5_000;

/// How long the page stays quiet after the model is in before the parts below the first screen
/// come in unasked: building them is most of the first load's main-thread work, and a
/// visitor who scrolls gets them at once. Two seconds: after the example on arrival is drawn
/// (~1.8 s), and soon enough that the story tells it within 3 s of the model being in, in
/// WebKit too (3 s put it at 3.0-3.3 s there).
const REVEAL_QUIET_MS: u32 = 2_000;
