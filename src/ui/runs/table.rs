//! A row of the runs table, and what its buttons do.

use std::collections::BTreeSet;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::place::{Address, Place};
use crate::run_record::RunRecord;
use crate::run_store::short_name;
use crate::ui::state::{AppState, RunsNote, Training};

/// The table's choices, shared with its rows through context.
#[derive(Clone, Copy)]
pub(super) struct RunsTable {
    app: AppState,
    /// Where Continue and a deletion of the tab's run go (none in a test's table alone).
    training: Option<Training>,
    /// The runs whose curves are overlaid.
    pub selected: RwSignal<BTreeSet<u64>>,
    /// The run whose attention timeline is replayed.
    pub replayed: RwSignal<Option<u64>>,
}

impl RunsTable {
    pub fn new(app: AppState) -> Self {
        Self {
            app,
            training: use_context::<Training>(),
            selected: RwSignal::new(BTreeSet::new()),
            replayed: RwSignal::new(None),
        }
    }

    /// A run's weights, into the draw panel.
    fn use_weights(self, id: u64) {
        spawn_local(async move {
            match self.app.keeper.weights(id).await {
                Ok(bytes) => {
                    self.app
                        .use_weights((bytes, format!("run {}", short_name(id))));
                    // Unless the person went elsewhere meanwhile.
                    if self.app.address.get_untracked().place == Place::Runs {
                        self.app.go(Address::of(Place::Draw));
                    }
                }
                Err(error) => self
                    .app
                    .keeper
                    .problem
                    .set(Some(RunsNote::NoWeights(error))),
            }
        })
    }

    /// The run continues in the training panel, which opens to show it.
    fn continue_run(self, id: u64) {
        if let Some(training) = self.training {
            training.continue_run(id);
        }
        self.app.go(Address::of(Place::Train));
    }

    /// The row goes once the browser's database has let the run go (its checkpoint and
    /// weights with it, in one transaction), so that a reload straight after the click cannot
    /// bring it back; a run another tab trains, or a database that refuses, keeps its row and
    /// says why. The tab's own run stops training.
    fn delete(self, id: u64) {
        let (keeper, training) = (self.app.keeper, self.training);
        spawn_local(async move {
            match keeper.delete(id).await {
                Ok(ours) => {
                    if ours && let Some(training) = training {
                        training.deleted(id);
                    }
                    self.selected.update(|chosen| {
                        chosen.remove(&id);
                    });
                }
                Err(error) => keeper.problem.set(Some(RunsNote::NotDeleted(error))),
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
            <td data-label="compare">
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
            <td class="run-name" data-label="run">{name.clone()}" "<span class="caption">{started(record.started_ms())}</span></td>
            <td class="caption" data-label="plan">{record.summary()}</td>
            <td data-label="device">{record.backend.map_or("–", |b| b.label())}</td>
            <td data-label="steps">{format!("{} / {}", record.step, record.total_steps)}</td>
            <td data-label="best test">{percent(record.best_test)}</td>
            <td data-label="last test">{percent(record.last_test)}</td>
            <td class="buttons" data-label="actions">
                // Only what the run has: weights once it has kept some, attention once it has
                // snapshots of it.
                {record.has_weights.then(|| view! {
                    <button on:click=move |_| table.use_weights(id) aria-label=format!("Draw with it: the weights of run {name}")>"Draw with it"</button>
                })}
                <button on:click=move |_| table.continue_run(id) data-testid="continue-run" title=continue_from aria-label=format!("Continue run {name} {continue_from}")>"Continue"</button>
                {(!record.timeline.snapshots.is_empty()).then(|| view! {
                    <button on:click=move |_| table.replayed.set(Some(id)) aria-label=format!("Replay attention of run {name}")>"Replay attention"</button>
                })}
                <button on:click=move |_| table.delete(id) aria-label=format!("Delete run {name}")>"Delete"</button>
            </td>
        </tr>
    }
}
