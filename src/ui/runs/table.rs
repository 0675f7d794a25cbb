//! A row of the runs table, and what its buttons do.

use std::collections::BTreeSet;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::run_record::RunRecord;
use crate::run_store::short_name;
use crate::ui::state::AppState;

/// The table's choices, shared with its rows through context.
#[derive(Clone, Copy)]
pub(super) struct RunsTable {
    app: AppState,
    /// The runs whose curves are overlaid.
    pub selected: RwSignal<BTreeSet<u64>>,
    /// The run whose attention timeline is replayed.
    pub replayed: RwSignal<Option<u64>>,
}

impl RunsTable {
    pub fn new(app: AppState) -> Self {
        Self {
            app,
            selected: RwSignal::new(BTreeSet::new()),
            replayed: RwSignal::new(None),
        }
    }

    /// A run's weights, into the draw panel.
    fn use_weights(self, id: u64) {
        spawn_local(async move {
            match self.app.keeper.weights(id).await {
                Ok(bytes) => self
                    .app
                    .use_weights((bytes, format!("run {}", short_name(id)))),
                Err(error) => self.app.keeper.problem.set(Some(error)),
            }
        })
    }

    /// The row goes once the browser's database has let the run go (its checkpoint and
    /// weights with it, in one transaction), so that a reload straight after the click cannot
    /// bring it back; a run another tab trains, or a database that refuses, keeps its row and
    /// says why. The tab's own run stops training.
    fn delete(self, id: u64) {
        let keeper = self.app.keeper;
        spawn_local(async move {
            match keeper.delete(id).await {
                Ok(_) => self.selected.update(|chosen| {
                    chosen.remove(&id);
                }),
                Err(error) => keeper.problem.set(Some(format!("Not deleted: {error}."))),
            }
        })
    }
}

fn percent(accuracy: Option<f32>) -> String {
    accuracy.map_or_else(|| "–".into(), |a| format!("{:.2}%", 100.0 * a))
}

fn started(ms: u64) -> String {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(ms as f64));
    String::from(date.to_locale_string("en-GB", &wasm_bindgen::JsValue::UNDEFINED))
}

#[component]
pub(super) fn RunRow(record: RunRecord) -> impl IntoView {
    let table = expect_context::<RunsTable>();
    let selected = table.selected;
    let id = record.id;
    let name = short_name(id);
    // A run without a checkpoint yet starts again from its plan, which its seed makes the
    // same as its step 0.
    let continue_from = if record.has_checkpoint {
        "from its last checkpoint"
    } else {
        "from its start (no checkpoint yet)"
    };
    view! {
        <tr data-testid="run-row" data-run=id.to_string()>
            <td>
                <input
                    type="checkbox"
                    aria-label=format!("compare run {name}")
                    prop:checked=move || selected.with(|s| s.contains(&id))
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        selected.update(|s| {
                            if on { s.insert(id); } else { s.remove(&id); }
                        });
                    }
                />
            </td>
            <td>{name.clone()}" "<span class="caption">{started(record.started_ms())}</span></td>
            <td class="caption">{record.summary()}</td>
            <td>{record.backend.map_or("–", |b| b.label())}</td>
            <td>{format!("{} / {}", record.step, record.total_steps)}</td>
            <td>{percent(record.best_test)}</td>
            <td>{percent(record.last_test)}</td>
            <td class="buttons">
                <button prop:disabled=!record.has_weights on:click=move |_| table.use_weights(id) aria-label=format!("Use weights of run {name}")>"Use weights"</button>
                <button on:click=move |_| table.app.keeper.continue_asked.set(Some(id)) data-testid="continue-run" title=continue_from aria-label=format!("Continue run {name} {continue_from}")>"Continue"</button>
                <button prop:disabled=record.timeline.snapshots.is_empty() on:click=move |_| table.replayed.set(Some(id)) aria-label=format!("Replay attention of run {name}")>"Replay attention"</button>
                <button on:click=move |_| table.delete(id) aria-label=format!("Delete run {name}")>"Delete"</button>
            </td>
        </tr>
    }
}
