//! The page's start-up: the weights fetched and the model warmed on the CPU, the link's map
//! checked against it, the test batch measured, and then WebGPU timed against the CPU where
//! the browser has it and no backend was asked for.

use leptos::prelude::*;

use crate::analysis::MapChoice;
use crate::data::IMAGE_PIXELS;
use crate::model::VitConfig;
use crate::protocol::BackendKind;
use crate::ui::state::{AppState, browser_has_webgpu, distance_digits_of, test_batch_distance};
use crate::web;

/// Runs once, in the background; each failure is said in the banner and ends what depends on
/// it, never the page.
pub(super) async fn start(app: AppState, weights_url: String) {
    let Some(bytes) = fetch_weights(app, &weights_url).await else {
        return;
    };
    let backend = app.preferred.unwrap_or(BackendKind::Cpu);
    app.status
        .set(format!("Warming up on {}…", backend.label()));
    if let Err(error) = app.host.install(&bytes, backend).await {
        app.status.set("No model loaded.".into());
        app.show_error(error.to_string());
        return;
    }
    app.status.set(String::new());
    if app.preferred.is_none() && !browser_has_webgpu() {
        // Nothing to time: the page says at once why it draws on the CPU.
        app.host
            .note
            .set(Some(format!("On the CPU: {}", web::NO_WEBGPU)));
    }
    let vit = app
        .host
        .engine
        .with_untracked(|e| e.as_ref().and_then(|e| e.config.vit().cloned()));
    if let Some(config) = &vit {
        drop_a_linked_map_that_does_not_fit(app, config);
    }
    let digits = distance_digits_of(app.test_digits).await;
    match &digits {
        // A CNN has no attention to measure.
        Ok(_) if vit.is_none() => {}
        Ok(digits) => match test_batch_distance(app.host, digits).await {
            Ok(distance) => app.batch_distance.set(Some(distance)),
            Err(error) => app.show_error(format!("The test batch for attention distance: {error}")),
        },
        Err(error) => app.show_error(format!("The test batch for attention distance: {error}")),
    }
    if app.preferred.is_none() && browser_has_webgpu() {
        // A real digit, so the GPU does the work a drawing gives it.
        let probe = digits
            .ok()
            .and_then(|digits| digits.first().copied())
            .unwrap_or([0; IMAGE_PIXELS]);
        app.host.choose_faster(&bytes, &probe).await;
    }
}

/// The weights' bytes, with their progress in the status line.
async fn fetch_weights(app: AppState, url: &str) -> Option<Vec<u8>> {
    let fetched = web::fetch_bytes(url, |done, total| {
        app.status.set(match total {
            Some(total) => format!("Loading weights: {} / {} kB", done / 1000, total / 1000),
            None => format!("Loading weights: {} kB", done / 1000),
        })
    })
    .await;
    match fetched {
        Ok(bytes) => Some(bytes),
        Err(error) => {
            app.status.set("No model loaded.".into());
            app.show_error(error.to_string());
            None
        }
    }
}

/// A map the link asked for that the model has no layer or head for is said and dropped.
fn drop_a_linked_map_that_does_not_fit(app: AppState, config: &VitConfig) {
    let map = app.map.get_untracked();
    if !map.fits(config.depth, config.heads) {
        app.show_error(format!(
            "The link: map={}: the model has {} layers of {} heads; ignored.",
            map.to_param(),
            config.depth,
            config.heads
        ));
        app.map.set(MapChoice::Rollout);
    }
}
