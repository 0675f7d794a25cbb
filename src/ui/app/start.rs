//! The page's start-up: the drawing worker started while the weights are fetched, the model
//! built and warmed there, the link's map checked against it; then, once the page is
//! interactive and quiet, WebGPU timed against the CPU where the browser has it and no backend
//! was asked for.

use leptos::prelude::*;

use crate::analysis::MapChoice;
use crate::model::VitConfig;
use crate::protocol::BackendKind;
use crate::ui::state::{AppState, BackendNote, PageProblem, browser_has_webgpu};
use crate::web;

/// How long the page stays quiet after it has loaded before the GPU trial starts (it fetches
/// the 3 MB GPU worker).
const GPU_TRIAL_QUIET_MS: u32 = 1_000;

/// Runs once, in the background, and gives the weights once they are in use; each failure is
/// said in the banner and ends what depends on it, never the page.
pub(super) async fn start(app: AppState, weights_url: String) -> Option<Vec<u8>> {
    // Its code loads while the weights do.
    if let Err(error) = app.host.start_cpu_worker() {
        app.status.set("No model loaded.".into());
        app.show_error(PageProblem::Host(error));
        return None;
    }
    let bytes = fetch_weights(app, &weights_url).await?;
    let backend = app.preferred.unwrap_or(BackendKind::Cpu);
    app.status
        .set(format!("Warming up on {}…", backend.label()));
    if let Err(error) = app.host.install(&bytes, backend).await {
        app.status.set("No model loaded.".into());
        app.show_error(PageProblem::Host(error));
        return None;
    }
    app.status.set(String::new());
    if app.preferred.is_none() && !browser_has_webgpu() {
        // Nothing to time: the page says at once why it draws on the CPU.
        app.host.note.set(Some(BackendNote::NoWebGpu));
    }
    let vit = app
        .host
        .engine
        .with_untracked(|e| e.as_ref().and_then(|e| e.config.vit().cloned()));
    if let Some(config) = &vit {
        drop_a_linked_map_that_does_not_fit(app, config);
    }
    // Only if a card that shows it has been seen already.
    app.distance.measure();
    Some(bytes)
}

/// Where the browser has WebGPU and no backend was asked for: once the page is interactive and
/// quiet, times WebGPU against the CPU and keeps the faster.
pub(super) async fn time_webgpu(app: AppState, weights: Vec<u8>) {
    if app.preferred.is_none() && browser_has_webgpu() {
        web::when_idle(GPU_TRIAL_QUIET_MS).await;
        app.host.choose_faster(&weights).await;
    }
}

/// The weights' bytes, with their progress in the status line.
async fn fetch_weights(app: AppState, url: &str) -> Option<Vec<u8>> {
    let fetched = web::fetch_weights(url, |done, total| {
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
            app.show_error(PageProblem::Fetch(error));
            None
        }
    }
}

/// A map the link asked for that the model has no layer or head for is said and dropped.
fn drop_a_linked_map_that_does_not_fit(app: AppState, config: &VitConfig) {
    let map = app.view.map.get_untracked();
    if !map.fits(config.depth, config.heads) {
        app.show_error(PageProblem::MapDoesNotFit {
            map,
            depth: config.depth,
            heads: config.heads,
        });
        app.view.map.set(MapChoice::Rollout);
    }
}
