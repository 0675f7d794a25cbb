//! What the whole page shares, through Leptos context: the model and where it runs, what the
//! lab shows, the runs kept, and the banner that says what went wrong.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{
    BatchDistance, Drawing, LabView, ModelHost, PageProblem, Revealed, RunKeeper, ShownDigit,
};
use crate::place::Address;
use crate::protocol::BackendKind;
use crate::share::View;
use crate::shipped::is_shipped;
use crate::web::{self, DrawingError};

/// Weights handed to the draw panel, with a name for where they came from.
pub type WeightsOffer = (Vec<u8>, String);

/// The page's shared state, provided by [`crate::ui::App`].
#[derive(Clone, Copy)]
pub struct AppState {
    pub host: ModelHost,
    /// What the error banner says.
    pub error: RwSignal<Option<PageProblem>>,
    /// What the page is doing while it starts; empty once a model is ready.
    pub status: RwSignal<String>,
    /// Mean attention distance over a batch of test digits.
    pub distance: BatchDistance,
    /// What the model reads.
    pub drawing: Drawing,
    /// The map shown large and the heads switched off.
    pub view: LabView,
    /// Where the model in use came from, as the page names it.
    pub model_source: RwSignal<String>,
    /// The address of the model in use, for a link to the experiment; none for an upload or
    /// a training run's weights.
    pub model_url: RwSignal<Option<String>>,
    /// Keeps each run's record for the runs table.
    pub keeper: RunKeeper,
    /// How much of the page below its first screen is in.
    pub revealed: Revealed,
    /// The place shown, and the part of it a link named (`crate::place`).
    pub address: RwSignal<Address>,
    /// The backend the page was asked for (`?backend=`), the default for training too; none
    /// times the two.
    pub preferred: Option<BackendKind>,
}

impl AppState {
    /// The page's state, viewing `view` as a link set it.
    pub fn new(preferred: Option<BackendKind>, weights_url: &str, view: View) -> Self {
        let host = ModelHost::new();
        let error = RwSignal::new(None);
        Self {
            host,
            error,
            status: RwSignal::new("Loading the weights…".to_string()),
            distance: BatchDistance::new(host, error),
            drawing: Drawing::new(),
            view: LabView::new(view),
            model_source: RwSignal::new(weights_url.to_string()),
            model_url: RwSignal::new(Some(weights_url.to_string())),
            keeper: RunKeeper::new(),
            revealed: Revealed::new(),
            address: RwSignal::new(Address::default()),
            preferred,
        }
    }

    /// Opens the place (and brings in the part) `address` names, as a link to it would: the
    /// history gets an entry, so that Back returns.
    pub fn go(self, address: Address) {
        if let Some(window) = web_sys::window() {
            let _ = window.location().set_hash(&address.fragment());
        }
    }

    pub fn show_error(self, problem: PageProblem) {
        self.error.set(Some(problem));
    }

    /// Provides the page's state as context: the whole, and each of the small parts a card
    /// takes alone (the model, what it reads, how the lab is looked at, the batch's distance,
    /// how much of the page below is in).
    pub fn provide(self) {
        provide_context(self);
        provide_context(self.host);
        provide_context(self.drawing);
        provide_context(self.view);
        provide_context(self.distance);
        provide_context(self.revealed);
    }

    /// A random test digit in the draw panel instead of a drawing, as its button there puts
    /// one: what a card waiting for a drawing offers in one click.
    pub fn show_random_digit(self) {
        let Some(engine) = self.host.engine.get_untracked() else {
            return;
        };
        spawn_local(async move {
            match engine.test_digit(None).await {
                Ok(digit) => self
                    .drawing
                    .shown_digit
                    .set(Some(ShownDigit::of_test_digit(digit))),
                Err(error) => self.show_error(PageProblem::NoTestDigit(error)),
            }
        })
    }

    /// A failing GPU (lost device, driver reset, a worker that died) must not end the
    /// session: the CPU copy of the model takes over. Whether the work can be tried again.
    pub fn fail_over(self, failed_on: BackendKind, error: DrawingError) -> bool {
        match self.host.fail_over(failed_on, error) {
            Ok(()) => true,
            Err(error) => {
                self.show_error(PageProblem::Host(error));
                false
            }
        }
    }

    /// Weights from the training run or an upload replace the model only once they work.
    pub fn use_weights(self, (bytes, source): WeightsOffer) {
        spawn_local(async move {
            let backend = self.host.backend().unwrap_or(BackendKind::Cpu);
            match self.host.install(&bytes, backend).await {
                Ok(()) => {
                    self.model_url
                        .set(is_shipped(&source).then(|| source.clone()));
                    self.model_source.set(source);
                    self.error.set(None);
                    self.distance.renew();
                }
                Err(why) => self.show_error(PageProblem::NotInstalled { from: source, why }),
            }
        });
    }

    /// A shipped model goes through the same checks as any other weights.
    pub fn use_shipped(self, url: String) {
        spawn_local(async move {
            match web::fetch_weights(&url, |_, _| {}).await {
                Ok(bytes) => self.use_weights((bytes, url)),
                Err(why) => self.show_error(PageProblem::NotFetched { from: url, why }),
            }
        })
    }
}
