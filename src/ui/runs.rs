//! The runs table: every run started in this browser, kept across reloads (`web::RunLog`),
//! to select and compare (their curves overlaid), to load into the draw panel, or to delete.

use std::collections::BTreeSet;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::chart::{LineChart, Series};
use super::{AttentionTimeline, WeightsOffer};
use crate::analysis::timeline::Timeline;
use crate::protocol::{FromTrainer, RunState};
use crate::run_record::RunRecord;
use crate::run_view::RunView;
use crate::web::RunLog;

/// Colours of compared runs, by CSS class `run-0` … (then again).
const RUN_CLASSES: [&str; 6] = ["run-0", "run-1", "run-2", "run-3", "run-4", "run-5"];

fn percent(accuracy: Option<f32>) -> String {
    accuracy.map_or_else(|| "–".into(), |a| format!("{:.2}%", 100.0 * a))
}

fn started(id: u64) -> String {
    let date = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(id as f64));
    String::from(date.to_locale_string("en-GB", &wasm_bindgen::JsValue::UNDEFINED))
}

#[component]
pub fn RunsPanel(
    /// The records (oldest first, the run in progress among them) and why they cannot be
    /// kept, when they cannot.
    keeper: RunKeeper,
    /// Takes a run's weights into the draw panel.
    on_weights: Callback<WeightsOffer>,
) -> impl IntoView {
    let (records, problem) = (keeper.records, keeper.problem);
    let selected = RwSignal::new(BTreeSet::<u64>::new());
    let replayed = RwSignal::new(None::<u64>);
    let replay_timeline = Memo::new(move |_| {
        let id = replayed.get();
        records
            .with(|all| {
                all.iter()
                    .find(|r| Some(r.id) == id)
                    .map(|r| r.timeline.clone())
            })
            .unwrap_or_default()
    });
    let compared = move || {
        records.with(|all| {
            selected.with(|chosen| {
                all.iter()
                    .filter(|r| chosen.contains(&r.id))
                    .cloned()
                    .collect::<Vec<_>>()
            })
        })
    };
    // One line a compared run, in its own colour.
    let series_of =
        move |name: &'static str, dots: bool, points: fn(&RunRecord) -> Vec<(f64, f64)>| {
            Signal::derive(move || {
                compared()
                    .iter()
                    .enumerate()
                    .map(|(i, r)| Series {
                        label: format!("#{} {name}", r.id % 10_000),
                        class: RUN_CLASSES[i % RUN_CLASSES.len()],
                        points: points(r),
                        dots,
                    })
                    .collect()
            })
        };
    let loss_series = series_of("loss", false, |r| {
        r.history
            .steps
            .iter()
            .map(|p| (p.step as f64, p.smoothed_loss as f64))
            .collect()
    });
    let accuracy_series = series_of("test", true, |r| {
        r.history
            .evals
            .iter()
            .map(|p| (p.step as f64, p.accuracy as f64))
            .collect()
    });
    let use_weights = move |id: u64| {
        spawn_local(async move {
            let weights = match RunLog::open().await {
                Ok(log) => log.weights(id).await,
                Err(message) => Err(message),
            };
            match weights {
                Ok(bytes) => on_weights.run((bytes, format!("run #{}", id % 10_000))),
                Err(error) => problem.set(Some(error.to_string())),
            }
        })
    };
    let delete = move |id: u64| {
        keeper.deleted(id);
        records.update(|all| all.retain(|r| r.id != id));
        selected.update(|chosen| {
            chosen.remove(&id);
        });
        spawn_local(async move {
            let deleted = match RunLog::open().await {
                Ok(log) => log.delete(id).await,
                Err(message) => Err(message),
            };
            if let Err(error) = deleted {
                problem.set(Some(error.to_string()));
            }
        })
    };
    view! {
        <section class="card runs" data-testid="runs-panel">
            <h2>"Runs in this browser"</h2>
            {move || problem.get().map(|message| view! { <p class="error" data-testid="runs-error" role="alert">{message}</p> })}
            <div class="scroll-x" tabindex="0" role="region" aria-label="runs">
                <table class="runs-table" data-testid="runs-table">
                    <thead>
                        <tr><th>"compare"</th><th>"run"</th><th>"plan"</th><th>"device"</th><th>"steps"</th><th>"best test"</th><th>"last test"</th><th>"actions"</th></tr>
                    </thead>
                    <tbody>
                        <For each=move || records.get().into_iter().rev() key=|r| (r.id, r.step, r.has_weights, r.last_test.map(f32::to_bits)) let:record>
                            {
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
                                            <button prop:disabled=!record.has_weights on:click=move |_| use_weights(id) aria-label=format!("Use weights of run {name}")>"Use weights"</button>
                                            <button prop:disabled=record.timeline.snapshots.is_empty() on:click=move |_| replayed.set(Some(id)) aria-label=format!("Replay attention of run {name}")>"Replay attention"</button>
                                            <button on:click=move |_| delete(id) aria-label=format!("Delete run {name}")>"Delete"</button>
                                        </td>
                                    </tr>
                                }
                            }
                        </For>
                    </tbody>
                </table>
            </div>
            <p class="caption">"Tick runs to overlay their curves. A run's weights are kept from its last pause, stop or end."</p>
            {move || replayed.get().map(|id| view! {
                <h3>{format!("Attention as run #{} learned", id % 10_000)}</h3>
                <AttentionTimeline timeline=replay_timeline testid="replay-timeline" />
            })}
            <div class="charts">
                <LineChart testid="compare-chart" x_label="step" series=loss_series />
                <LineChart testid="compare-accuracy" x_label="step" y_range=(0.0, 1.0) series=accuracy_series />
            </div>
        </section>
    }
}

/// What a message from the trainer means for the run's record.
pub enum Interest {
    None,
    /// A run began (or resumed) with this plan.
    Started(crate::train::TrainingPlan),
    /// Its figures moved: an evaluation, a change of state.
    Moved,
    /// It came to rest (paused, stopped, finished): its weights are worth keeping.
    Rested,
}

impl Interest {
    pub fn of(message: &FromTrainer) -> Self {
        match message {
            FromTrainer::Started { plan, .. } => Self::Started(plan.clone()),
            FromTrainer::State {
                state: RunState::Paused | RunState::Stopped | RunState::Finished,
            } => Self::Rested,
            // Idle and Starting say nothing of a run's figures (a reset, a start under way).
            FromTrainer::State {
                state: RunState::Idle | RunState::Starting,
            } => Self::None,
            FromTrainer::State { .. } | FromTrainer::Test(_) | FromTrainer::Attention { .. } => {
                Self::Moved
            }
            _ => Self::None,
        }
    }
}

/// Keeps the record of the run in progress: in the table at once, in the browser after.
/// Storage that fails is said in the runs panel; the run itself goes on.
#[derive(Clone, Copy)]
pub struct RunKeeper {
    records: RwSignal<Vec<RunRecord>>,
    problem: RwSignal<Option<String>>,
    current: StoredValue<Option<RunRecord>, LocalStorage>,
    /// The worker has started the current record's run: until then the panel's view is not
    /// the run's (a reset or a resume cleared it), and nothing is booked.
    live: StoredValue<bool>,
    /// The record the weights asked for at the last rest belong to.
    weights_for: StoredValue<Option<u64>>,
}

impl RunKeeper {
    pub fn new(records: RwSignal<Vec<RunRecord>>, problem: RwSignal<Option<String>>) -> Self {
        Self {
            records,
            problem,
            current: StoredValue::new_local(None),
            live: StoredValue::new(false),
            weights_for: StoredValue::new(None),
        }
    }

    /// The records kept in this browser, into the table.
    pub fn load(self) {
        spawn_local(async move {
            match RunLog::open().await {
                Ok(log) => self.records.set(log.records().await),
                Err(error) => self.problem.set(Some(error.to_string())),
            }
        });
    }

    /// The timeline of the run in progress, as its record keeps it.
    pub fn timeline(self) -> Timeline {
        self.current
            .with_value(|c| c.as_ref().map(|c| c.timeline.clone()))
            .unwrap_or_default()
    }

    /// The next run to start gets a record of its own.
    pub fn forget_current(self) {
        self.current.set_value(None);
        self.live.set_value(false);
    }

    /// The saved run goes on in its own record, when it has one: the last record started,
    /// if its plan is the saved run's (a newer run that never saved left its own behind).
    pub async fn resume_current(self, saved_plan: Option<crate::train::TrainingPlan>) {
        let record = match RunLog::open().await {
            Ok(log) => match log.current().await {
                Some(id) => log.record(id).await,
                None => None,
            },
            Err(_) => None,
        };
        self.live.set_value(false);
        self.current
            .set_value(record.filter(|r| saved_plan.as_ref() == Some(&r.plan)));
    }

    /// A record deleted from the table: the run in progress, if it was that one, goes on
    /// without a record.
    pub fn deleted(self, id: u64) {
        if self.current.with_value(|c| c.as_ref().map(|c| c.id)) == Some(id) {
            self.current.set_value(None);
            self.live.set_value(false);
        }
    }

    /// Books a message already applied to `view`; whether to ask for the weights to keep.
    pub fn after(self, interest: Interest, view: &RunView) -> bool {
        let rested = matches!(interest, Interest::Rested);
        match interest {
            Interest::None => return false,
            Interest::Started(plan) => {
                self.live.set_value(true);
                if self.current.with_value(Option::is_none) {
                    let id = js_sys::Date::now() as u64;
                    self.current.set_value(Some(RunRecord::new(id, plan)));
                    spawn_local(async move {
                        if let Ok(log) = RunLog::open().await {
                            let _ = log.set_current(id).await;
                        }
                    });
                }
            }
            Interest::Moved | Interest::Rested if !self.live.get_value() => return false,
            Interest::Moved | Interest::Rested => {}
        }
        let Some(mut record) = self.current.get_value() else {
            return false;
        };
        let id = record.id;
        record.update(view);
        self.keep(record);
        if rested {
            self.weights_for.set_value(Some(id));
        }
        rested
    }

    /// The run's weights, kept beside its record.
    pub fn keep_weights(self, bytes: Vec<u8>) {
        let Some(id) = self.weights_for.try_update_value(Option::take).flatten() else {
            return;
        };
        spawn_local(async move {
            let kept = match RunLog::open().await {
                Ok(log) => log.save_weights(id, &bytes).await,
                Err(message) => Err(message),
            };
            if let Err(error) = kept {
                return self.said(error.to_string());
            }
            // The record as it is now: messages may have moved it while the weights were saved.
            let current = self.current.get_value().filter(|c| c.id == id);
            let kept_record = current.or_else(|| {
                self.records
                    .with_untracked(|all| all.iter().find(|r| r.id == id).cloned())
            });
            if let Some(mut record) = kept_record {
                record.has_weights = true;
                self.keep(record);
            }
        });
    }

    fn keep(self, record: RunRecord) {
        if self.current.with_value(|c| c.as_ref().map(|c| c.id)) == Some(record.id) {
            self.current.set_value(Some(record.clone()));
        }
        self.records
            .update(|all| match all.iter_mut().find(|r| r.id == record.id) {
                Some(old) => *old = record.clone(),
                None => all.push(record.clone()),
            });
        spawn_local(async move {
            let kept = match RunLog::open().await {
                Ok(log) => log.save(&record).await,
                Err(message) => Err(message),
            };
            if let Err(error) = kept {
                self.said(error.to_string());
            }
        });
    }

    fn said(self, message: String) {
        self.problem.set(Some(format!(
            "The run is not kept in this browser: {message}. Training goes on."
        )));
    }
}
