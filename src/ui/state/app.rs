//! What the whole page shares, through Leptos context: the model and where it runs, what the
//! lab shows, the runs kept, and the banner that says what went wrong.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{
    LabState, ModelHost, PadStrokes, Revealed, RunKeeper, ShownDigit, test_batch_distance,
};
use crate::analysis::MapChoice;
use crate::model::HeadsOff;
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
    /// The message in the error banner.
    pub error: RwSignal<Option<String>>,
    /// What the page is doing while it starts; empty once a model is ready.
    pub status: RwSignal<String>,
    /// Mean attention distance over a batch of test digits, when known.
    pub batch_distance: RwSignal<Option<Vec<Vec<f32>>>>,
    /// Whether a card that shows the batch's distance has been seen (until then it is not
    /// measured), and the model generation it was last measured for.
    distance_wanted: StoredValue<bool>,
    distance_measured_for: StoredValue<Option<u32>>,
    /// A test digit shown in the draw panel instead of a drawing, set from anywhere.
    pub shown_digit: RwSignal<Option<ShownDigit>>,
    /// The attention map shown large (a link may set it).
    pub map: RwSignal<MapChoice>,
    /// The heads switched off in every classification (a link may set them).
    pub heads_off: RwSignal<HeadsOff>,
    /// The image the model is given: the drawing, or a test digit (the training run probes
    /// it too).
    pub model_input: RwSignal<Option<Vec<u8>>>,
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
    /// What is drawn on the pad, kept while another place is shown.
    pub strokes: PadStrokes,
    /// Whether a click on a head's map switches it off (else it shows it large).
    pub heads_switching: RwSignal<bool>,
    /// The backend the page was asked for (`?backend=`), the default for training too; none
    /// times the two.
    pub preferred: Option<BackendKind>,
}

impl AppState {
    /// The page's state, viewing `view` as a link set it.
    pub fn new(preferred: Option<BackendKind>, weights_url: &str, view: View) -> Self {
        let records = RwSignal::new(Vec::new());
        let runs_problem = RwSignal::new(None::<String>);
        Self {
            host: ModelHost::new(),
            error: RwSignal::new(None),
            status: RwSignal::new("Loading the weights…".to_string()),
            batch_distance: RwSignal::new(None),
            distance_wanted: StoredValue::new(false),
            distance_measured_for: StoredValue::new(None),
            shown_digit: RwSignal::new(None),
            map: RwSignal::new(view.map),
            heads_off: RwSignal::new(view.heads_off),
            model_input: RwSignal::new(None),
            model_source: RwSignal::new(weights_url.to_string()),
            model_url: RwSignal::new(Some(weights_url.to_string())),
            keeper: RunKeeper::new(records, runs_problem),
            revealed: Revealed::new(),
            address: RwSignal::new(Address::default()),
            strokes: StoredValue::new(Vec::new()),
            heads_switching: RwSignal::new(false),
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

    pub fn show_error(self, message: String) {
        self.error.set(Some(message));
    }

    /// What the lab needs, with this page's answers to failures and problems.
    pub fn lab(self) -> LabState {
        LabState {
            on_failure: Callback::new(move |(failed_on, error): (BackendKind, DrawingError)| {
                self.fail_over(failed_on, error)
            }),
            on_problem: Callback::new(move |message: String| self.show_error(message)),
            batch_distance: self.batch_distance.into(),
            want_batch_distance: Callback::new(move |()| self.want_batch_distance()),
            revealed: self.revealed,
            strokes: self.strokes,
            heads_switching: self.heads_switching,
            shown_digit: self.shown_digit,
            map: self.map,
            heads_off: self.heads_off,
            model_input: self.model_input,
        }
    }

    /// A failing GPU (lost device, driver reset, a worker that died) must not end the
    /// session: the CPU copy of the model takes over. Whether the work can be tried again.
    pub fn fail_over(self, failed_on: BackendKind, error: DrawingError) -> bool {
        match self.host.fail_over(failed_on, error) {
            Ok(()) => true,
            Err(error) => {
                self.show_error(error.to_string());
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
                    self.batch_distance.set(None);
                    self.measure_batch_distance();
                }
                Err(error) => self.show_error(format!(
                    "{source} was not loaded: {error}. The model in use stays."
                )),
            }
        });
    }

    /// A card that shows the test batch's attention distance is seen: it is measured from now
    /// on, for this model and each one swapped in.
    pub fn want_batch_distance(self) {
        self.distance_wanted.set_value(true);
        self.measure_batch_distance();
    }

    /// Measures the test batch's attention distance for the model in use, once per model, if
    /// a card that shows it has been seen and the model is a ViT.
    pub fn measure_batch_distance(self) {
        let generation = self.host.generation.get_untracked();
        let is_vit = self
            .host
            .engine
            .with_untracked(|e| e.as_ref().is_some_and(|e| e.config.vit().is_some()));
        if !self.distance_wanted.get_value()
            || !is_vit
            || self.distance_measured_for.get_value() == Some(generation)
        {
            return;
        }
        self.distance_measured_for.set_value(Some(generation));
        spawn_local(async move {
            match test_batch_distance(self.host).await {
                // Other weights came in meanwhile: they get their own.
                _ if self.host.generation.get_untracked() != generation => {}
                Ok(distance) => self.batch_distance.set(Some(distance)),
                Err(error) => {
                    self.show_error(format!("The test batch for attention distance: {error}"))
                }
            }
        });
    }

    /// A shipped model goes through the same checks as any other weights.
    pub fn use_shipped(self, url: String) {
        spawn_local(async move {
            match web::fetch_weights(&url, |_, _| {}).await {
                Ok(bytes) => self.use_weights((bytes, url)),
                Err(message) => self.show_error(format!(
                    "{url} was not loaded: {message}. The model in use stays."
                )),
            }
        })
    }
}
