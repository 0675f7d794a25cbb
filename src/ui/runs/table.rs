//! A row of the runs table, and what its buttons do.

use std::collections::BTreeSet;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::run_record::RunRecord;
use crate::ui::state::AppState;
use crate::web::RunLog;

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
            let weights = match RunLog::open().await {
                Ok(log) => log.weights(id).await,
                Err(message) => Err(message),
            };
            match weights {
                Ok(bytes) => self
                    .app
                    .use_weights((bytes, format!("run #{}", id % 10_000))),
                Err(error) => self.app.keeper.problem.set(Some(error.to_string())),
            }
        })
    }

    /// The row goes once the browser's storage has let the run go, so that a reload straight
    /// after the click cannot bring it back; a storage that refuses keeps the row and says why.
    fn delete(self, id: u64) {
        let keeper = self.app.keeper;
        // The run in progress, if it is this one, stops writing its record now: a save landing
        // after the delete would put the row back.
        keeper.deleted(id);
        spawn_local(async move {
            let deleted = match RunLog::open().await {
                Ok(log) => log.delete(id).await,
                Err(error) => Err(error),
            };
            match deleted {
                Ok(()) => {
                    keeper.records.update(|all| all.retain(|r| r.id != id));
                    self.selected.update(|chosen| {
                        chosen.remove(&id);
                    });
                }
                Err(error) => keeper.problem.set(Some(error.to_string())),
            }
        })
    }
}

fn percent(accuracy: Option<f32>) -> String {
    accuracy.map_or_else(|| "–".into(), |a| format!("{:.2}%", 100.0 * a))
}

fn started(id: u64) -> String {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(id as f64));
    String::from(date.to_locale_string("en-GB", &wasm_bindgen::JsValue::UNDEFINED))
}

#[component]
pub(super) fn RunRow(record: RunRecord) -> impl IntoView {
    let table = expect_context::<RunsTable>();
    let selected = table.selected;
    let id = record.id;
    let name = format!("#{}", id % 10_000);
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
            <td>{name.clone()} <span class="caption">{started(id)}</span></td>
            <td class="caption">{record.summary()}</td>
            <td>{record.backend.map_or("–", |b| b.label())}</td>
            <td>{format!("{} / {}", record.step, record.total_steps)}</td>
            <td>{percent(record.best_test)}</td>
            <td>{percent(record.last_test)}</td>
            <td class="buttons">
                <button prop:disabled=!record.has_weights on:click=move |_| table.use_weights(id) aria-label=format!("Use weights of run {name}")>"Use weights"</button>
                <button prop:disabled=!record.has_checkpoint on:click=move |_| table.app.keeper.continue_asked.set(Some(id)) data-testid="continue-run" aria-label=format!("Continue run {name} from its checkpoint")>"Continue"</button>
                <button prop:disabled=record.timeline.snapshots.is_empty() on:click=move |_| table.replayed.set(Some(id)) aria-label=format!("Replay attention of run {name}")>"Replay attention"</button>
                <button on:click=move |_| table.delete(id) aria-label=format!("Delete run {name}")>"Delete"</button>
            </td>
        </tr>
    }
}
