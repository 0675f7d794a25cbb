//! The lab's services wired once for the page: the classifications of the model's input, the
//! explaining worker and fine-tuning, provided as context, and the effects that keep the
//! reading in step with the input, the model and the heads switched off, whichever place is
//! shown.

use leptos::prelude::*;

use super::{AppState, Classifications, Explainer, FineTuning, ModelHost};
use crate::analysis::inference::ModelInsight;

/// The lab's services, provided once for every place: the classifications of the model's
/// input, the explaining worker (started on first use) and fine-tuning, and what keeps the reading in
/// step with the input, the model and the heads switched off, whichever place is shown.
pub fn provide_lab(app: AppState) -> Classifications {
    let (host, drawing, view) = (app.host, app.drawing, app.view);
    let classifier = Classifications::new(app);
    provide_context(classifier);
    provide_context(Explainer::new(host));
    provide_context(FineTuning::new());
    // A test digit goes to the model as it is, where a drawing goes through preprocessing.
    Effect::new(move |_| {
        if let Some(shown) = drawing.shown_digit.get() {
            classifier.classify(Some(shown.image));
        }
    });
    // What the weights show changes only with other weights, not when the same weights move
    // to another backend.
    let insight = insight_of(host);
    // Other weights read what is on the pad again (their maps may have another shape: the
    // old result goes first).
    Effect::new(move |before: Option<()>| {
        insight.track();
        if before.is_some() {
            classifier.result.set(None);
            classifier.classify(drawing.model_input.get_untracked());
        }
    });
    // Heads switched off or back on: the image is read again (unless what the model reads
    // does not change, as with another replacement for no heads).
    Effect::new(move |before: Option<()>| {
        view.heads_off.track();
        if before.is_some() {
            classifier.reclassify();
        }
    });
    // Heads that a new model does not have are dropped (a link's heads are kept for the
    // link's model).
    Effect::new(move |_| {
        let config = host
            .engine
            .with(|engine| engine.as_ref().and_then(|e| e.config.vit().cloned()));
        if let Some(config) = config
            && !view.heads_off.with_untracked(|off| off.fits(&config))
        {
            view.heads_off.update(|off| *off = off.within(&config));
        }
    });
    classifier
}

/// What the weights in use show, changed only by other weights.
pub fn insight_of(host: ModelHost) -> Memo<Option<ModelInsight>> {
    Memo::new(move |_| {
        host.engine
            .with(|engine| engine.as_ref().map(|e| e.insight.clone()))
    })
}
