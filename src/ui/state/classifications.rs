//! The lab's classifications: the image in, the latest result and its latency out, with at
//! most one inference in flight.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{AppState, PageProblem};
use crate::analysis::reading::Reading;
use crate::data::IMAGE_PIXELS;
use crate::model::HeadsOff;
use crate::web;
use crate::web::DrawingError;

/// Drawing-to-prediction latencies kept for the percentiles.
const LATENCIES_KEPT: usize = 200;

/// Shared by the lab's cards through context.
#[derive(Clone, Copy)]
pub struct Classifications {
    /// The page: the model, what it reads and the heads switched off; it answers a failure
    /// (the model moves to the CPU, or the banner says why).
    app: AppState,
    pub result: RwSignal<Option<Arc<Reading>>>,
    /// The heads switched off in the result shown.
    pub result_off: RwSignal<HeadsOff>,
    pub latencies: RwSignal<Vec<f64>>,
    /// Every classification of a drawing so far (the latencies keep the last 200).
    pub runs: RwSignal<usize>,
    /// Also shown as `data-busy`, so tests know when the prediction has caught up.
    pub in_flight: RwSignal<bool>,
    /// The newest image that came while an inference ran, and when it came.
    pending: StoredValue<Option<(Vec<u8>, f64)>>,
}

impl Classifications {
    pub fn new(app: AppState) -> Self {
        Self {
            app,
            result: RwSignal::new(None),
            result_off: RwSignal::new(HeadsOff::default()),
            latencies: RwSignal::new(Vec::new()),
            runs: RwSignal::new(0),
            in_flight: RwSignal::new(false),
            pending: StoredValue::new(None),
        }
    }

    /// Gives `image` to the model now (none clears the result).
    pub fn classify(self, image: Option<Vec<u8>>) {
        self.classify_from(image, web::now_ms());
    }

    /// Reads the model's input again, as it is, when the heads switched off change what the
    /// model reads; the input itself (and what follows it: the explanations, the training
    /// run's probe) stays.
    pub fn reclassify(self) {
        let Some(image) = self.app.drawing.model_input.get_untracked() else {
            return;
        };
        let now = self.effective_off();
        if !self.in_flight.get_untracked() && self.result_off.with_untracked(|shown| *shown == now)
        {
            return;
        }
        self.read(image, web::now_ms());
    }

    /// The heads switched off that the model in use has (none for a CNN).
    fn effective_off(self) -> HeadsOff {
        let config = self
            .app
            .host
            .engine
            .with_untracked(|engine| engine.as_ref().and_then(|e| e.config.vit().cloned()));
        match config {
            Some(config) => self
                .app
                .view
                .heads_off
                .with_untracked(|off| off.within(&config)),
            None => HeadsOff::default(),
        }
    }

    /// Gives `image`, made by an input at `asked_at` (in `performance.now()` milliseconds),
    /// to the model; its latency counts from then. While an inference runs only the newest
    /// image waits.
    pub fn classify_from(self, image: Option<Vec<u8>>, asked_at: f64) {
        self.app.drawing.model_input.set(image.clone());
        let Some(image) = image else {
            self.result.set(None);
            return;
        };
        self.read(image, asked_at);
    }

    /// Reads `image` now, or once the inference in flight is done (only the newest waits).
    fn read(self, image: Vec<u8>, asked_at: f64) {
        let job = (image, asked_at);
        if self.in_flight.get_untracked() {
            self.pending.set_value(Some(job));
            return;
        }
        self.in_flight.set(true);
        spawn_local(async move {
            let mut next = Some(job);
            while let Some((image, asked_at)) = next {
                let Some(engine) = self.app.host.engine.get_untracked() else {
                    break;
                };
                let image: [u8; IMAGE_PIXELS] =
                    image.try_into().expect("the pad makes 28×28 images");
                let off = self.effective_off();
                // Heads switched off are read on the CPU copy (see `ModelHost::cpu`).
                let engine = match off.is_empty() {
                    true => engine,
                    false => self.app.host.cpu.get_value().unwrap_or(engine),
                };
                match engine.classify(&image, off.clone()).await {
                    Ok(classification)
                        if self.app.drawing.model_input.with_untracked(Option::is_some) =>
                    {
                        // The first reading with other heads off is not a drawing's latency
                        // (by mean it also takes the heads' means, once).
                        let heads_switched = self.result_off.with_untracked(|shown| *shown != off);
                        self.result_off.set(off);
                        self.result.set(Some(Arc::new(classification)));
                        if !heads_switched {
                            self.record_latency(web::now_ms() - asked_at);
                        }
                    }
                    Ok(_) => self.result.set(None),
                    // Refused (a test chunk that did not load for the heads' means): said, and
                    // the model stays where it is.
                    Err(refused @ DrawingError::Refused(_)) => {
                        self.app.show_error(PageProblem::DrawingRefused(refused));
                    }
                    Err(error) => {
                        let moved = self.app.fail_over(engine.backend, error);
                        // Tried again where the model now runs, unless a newer drawing waits.
                        if moved && self.pending.with_value(Option::is_none) {
                            self.pending.set_value(Some((image.to_vec(), asked_at)));
                        }
                    }
                }
                next = self.pending.try_update_value(Option::take).flatten();
            }
            self.in_flight.set(false);
        });
    }

    fn record_latency(self, took: f64) {
        self.runs.update(|n| *n += 1);
        self.latencies.update(|l| {
            l.push(took);
            if l.len() > LATENCIES_KEPT {
                l.remove(0);
            }
        });
    }
}
