//! Heads switched off from the per-head grid: what a click on a head does there, what takes a
//! switched-off head's place, which heads are off, and a way to bring them all back.

use leptos::prelude::*;

use crate::analysis::ablation::PAGE_MEAN_IMAGES;
use crate::model::{HeadsOff, Replacement};
use crate::ui::state::{Classifications, LabView};
use crate::ui::widgets::thousands;

/// What takes a switched-off head's place, as the page words it ("replaced by …").
pub(super) fn replaced_by(replacement: Replacement) -> &'static str {
    match replacement {
        Replacement::Mean => "its mean output",
        Replacement::Zero => "zero",
    }
}

/// The heads off as the page words them: "switched off: layer 3 head 8, layer 5 head 7 (each
/// replaced by its mean output)".
pub(super) fn describe(off: &HeadsOff) -> String {
    if off.is_empty() {
        return "every head on".into();
    }
    let heads: Vec<String> = off
        .heads()
        .map(|(l, h)| format!("layer {} head {}", l + 1, h + 1))
        .collect();
    let by = replaced_by(off.replacement);
    format!("switched off: {} (each replaced by {by})", heads.join(", "))
}

/// The controls above the per-head grid. `switching` says whether a click on a head switches
/// it off (or back on) rather than showing it large.
#[component]
pub(super) fn HeadSwitches(switching: RwSignal<bool>) -> impl IntoView {
    let off = expect_context::<LabView>().heads_off;
    let set_replacement = move |event| {
        if let Some(replacement) = Replacement::from_param(&event_target_value(&event)) {
            off.update(|off| off.replacement = replacement);
        }
    };
    let mean_label = format!("its mean over {} test digits", thousands(PAGE_MEAN_IMAGES));
    // Heads switched but the drawing not read with them yet: the first switch-off by mean
    // also takes every head's mean output, a few seconds on a CPU.
    let classifier = use_context::<Classifications>();
    let reading = move || {
        classifier.is_some_and(|c| {
            c.in_flight.get() && c.result_off.with(|shown| off.with(|o| shown != o))
        })
    };
    // Folded until asked for, or open from the start while heads are off (a link may switch
    // some off); never folded under the person's hand.
    let open = switching.get_untracked() || off.with_untracked(|o| !o.is_empty());
    view! {
        <details class="head-switches" data-testid="head-switches" open=open>
            <summary>"Switch heads off"</summary>
            <span class="segmented" role="group" aria-label="what a click on a head does">
                <button class="small" aria-pressed=move || (!switching.get()).to_string() on:click=move |_| switching.set(false)>"Click shows a head"</button>
                <button class="small" id="switch-heads" data-testid="switch-heads" aria-pressed=move || switching.get().to_string() on:click=move |_| switching.set(true)>"Click switches it off"</button>
            </span>
            <label>
                "replaced by "
                <select data-testid="heads-off-by" on:change=set_replacement>
                    <option value="mean" selected=move || off.with(|o| o.replacement == Replacement::Mean)>{mean_label}</option>
                    <option value="zero" selected=move || off.with(|o| o.replacement == Replacement::Zero)>"zero"</option>
                </select>
            </label>
            {move || off.with(|o| !o.is_empty()).then(|| view! {
                <button class="small" data-testid="heads-back"
                    on:click=move |_| {
                        off.update(|o| *o = HeadsOff::new([], o.replacement));
                        crate::web::address::focus("switch-heads");
                    }>"Every head back on"</button>
            })}
            <p class="heads-off-status" class:reading=reading data-testid="heads-off" data-off=move || off.with(HeadsOff::to_param) role="status">
                {move || if reading() {
                    "Reading the drawing again with these heads… (the first time by mean also takes each head's mean output)".to_string()
                } else {
                    off.with(describe)
                }}
            </p>
        </details>
    }
}
