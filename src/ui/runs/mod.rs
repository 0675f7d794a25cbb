//! The runs table: every run started in this browser, kept across reloads in the browser's
//! database (`ui::state::RunKeeper`), with the space it takes; to select and compare (their curves overlaid), to load into the draw panel, or to delete.

mod compare;
mod table;

use leptos::prelude::*;

use crate::place::{Address, Place};
use crate::ui::lab::AttentionTimeline;
use crate::ui::state::AppState;
use compare::CompareCharts;
use table::{RunRow, RunsTable};

#[component]
pub fn RunsPanel() -> impl IntoView {
    let app = expect_context::<AppState>();
    let (records, problem) = (app.keeper.records, app.keeper.problem);
    let table = RunsTable::new(app);
    provide_context(table);
    let replayed = table.replayed;
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
    view! {
        <section class="card runs" data-testid="runs-panel">
            <h2>"Runs in this browser"</h2>
            {move || problem.get().map(|note| view! { <p class="error" data-testid="runs-error" role="alert">{note.to_string()}</p> })}
            {move || records.with(Vec::is_empty).then(|| view! {
                <div class="chart-empty" data-testid="no-runs">
                    <p>"No run yet in this browser. A run you train is kept here, with its curves and weights, across reloads."</p>
                    <a class="button primary" href=Address::of(Place::Train).fragment()>"Train one"</a>
                </div>
            })}
            <div class="runs-list" hidden=move || records.with(Vec::is_empty)>
                <table class="runs-table" data-testid="runs-table">
                    <thead>
                        <tr><th>"compare"</th><th>"run"</th><th>"plan"</th><th>"device"</th><th>"steps"</th><th>"best test"</th><th>"last test"</th><th>"actions"</th></tr>
                    </thead>
                    <tbody>
                        <For each=move || records.get().into_iter().rev() key=|r| (r.id, r.step, r.has_weights, r.has_checkpoint, r.last_test.map(f32::to_bits)) let:record>
                            <RunRow record=record />
                        </For>
                    </tbody>
                </table>
            </div>
            <p class="caption" hidden=move || records.with(Vec::is_empty)>"Tick runs to overlay their curves. A run's weights are kept from its last pause, stop or end."</p>
            <SpaceUsed />
            {move || replayed.get().map(|id| view! {
                <h3>{format!("Attention as run {} learned", crate::run_store::short_name(id))}</h3>
                <AttentionTimeline timeline=replay_timeline testid="replay-timeline" />
            })}
            <CompareCharts />
        </section>
    }
}

fn megabytes(bytes: f64) -> String {
    if bytes >= 1e9 {
        format!("{:.1} GB", bytes / 1e9)
    } else {
        format!("{:.1} MB", bytes / 1e6)
    }
}

/// The space the page's storage takes and may take, and whether the browser keeps it.
#[component]
fn SpaceUsed() -> impl IntoView {
    let space = expect_context::<AppState>().keeper.space;
    move || {
        space.get().map(|space| {
            let kept = if space.persistent {
                "kept until you clear it"
            } else {
                "the browser may clear it when the disk runs short"
            };
            view! {
                <p class="caption" data-testid="runs-space">
                    {format!("This page keeps {} of the {} the browser allows it ({kept}).", megabytes(space.used), megabytes(space.quota))}
                </p>
            }
        })
    }
}
