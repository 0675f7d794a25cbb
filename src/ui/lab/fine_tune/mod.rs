//! "Learn my handwriting": the card of the fine-tuning service (`ui/state/fine_tuning/`): the
//! mix, the button, where the runs stand, then before and after side by side
//! (`before_after.rs`).

mod before_after;

use leptos::prelude::*;

use crate::place::Part;
use crate::run_store::short_name;
use crate::ui::state::{
    COPIES, EPOCHS, FineTuning, Handwriting, MNIST, MixChoice, ModelHost, RunSteps, Scoring, Stage,
    Training,
};
use crate::ui::widgets::thousands;
use crate::web::before_after::SCORED_TEST_DIGITS;
use before_after::BeforeAfter;

/// The form, the button, and the comparison once the runs have finished.
#[component]
pub(super) fn LearnMyHandwriting() -> impl IntoView {
    let host = expect_context::<ModelHost>();
    let handwriting = expect_context::<Handwriting>();
    // Fine-tuning is a run of the page's training panel, kept with its runs: a lab on its own
    // (a test's) has neither, and no such card.
    let Some(training) = use_context::<Training>() else {
        return ().into_any();
    };
    let card = use_context::<FineTuning>().unwrap_or_default();
    let (choice, stage) = (card.choice, card.stage());
    let refusal = move || choice.with(|c| c.refusal(handwriting.set.with(|s| s.len())));
    let can_start = move || {
        refusal().is_none() && host.engine.with(Option::is_some) && !stage.with(Stage::busy)
    };
    let start = move |_| {
        let (Some(base), Some(config)) = (
            host.weights.get_value(),
            host.engine
                .with_untracked(|e| e.as_ref().map(|e| e.config.clone())),
        ) else {
            return;
        };
        card.start(training, (base, config), handwriting.set.get_untracked());
    };
    let stop_waiting = move |_| card.stop_waiting();
    let progress = move |run: Option<(u64, RunSteps)>, part: usize, parts: usize| {
        let which = match (parts, part == parts) {
            (1, _) => String::new(),
            (_, true) => format!("Run {part} of {parts}, on every digit: "),
            (_, false) => format!("Run {part} of {parts}, fold {part} held out: "),
        };
        let Some((run, steps)) = run else {
            return format!("{which}starting…");
        };
        let name = short_name(run);
        match steps.get() {
            Some((step, total)) => format!(
                "{which}fine-tuning as run {name}: step {step} of {total} (its charts are in the training panel)."
            ),
            None => format!("{which}fine-tuning as run {name}: fetching MNIST's digits…"),
        }
    };
    view! {
        <div class="fine-tune" data-testid="fine-tune" data-stage=move || stage.with(|s| s.name()) id=Part::LearnMyHandwriting.slug() tabindex="-1">
            <h3>"Learn my handwriting"</h3>
            <p>"Fine-tune the model in use on your digits, mixed with MNIST's, and see how it reads the ones it did not learn from, before and after."</p>
            <details class="why">
            <summary>"How it works"</summary>
            <p class="hint">
                "Fine-tunes the model in use on your digits, augmented and mixed with MNIST's so that MNIST is not forgotten, as a run of the training panel (kept in the runs table like any other). Digits held out of the run are scored before and after, with MNIST's first "
                {thousands(SCORED_TEST_DIGITS as usize)}" test digits; a small set can be scored a digit at a time, each held out by one of five runs before a last run learns them all. After a reload the run under way can be continued in the training panel, but this comparison is not made."
            </p>
            </details>
            <MixForm choice=choice />
            <p class="caption" data-testid="fine-tune-mix">{move || handwriting.set.with(|set| choice.get().describe(set.len()))}</p>
            <div class="buttons">
                <button class="primary" data-testid="fine-tune-start" prop:disabled=move || !can_start() on:click=start>
                    "Learn my handwriting"
                </button>
                {move || stage.with(Stage::busy).then(|| view! {
                    <button data-testid="fine-tune-stop-waiting" on:click=stop_waiting>"Stop waiting"</button>
                })}
            </div>
            <p class="teach-said" data-testid="fine-tune-status" role="status">{move || stage.with(|s| match s {
                Stage::Idle => refusal().map(|r| r.to_string()).unwrap_or_default(),
                Stage::Training { run, part, parts } => progress(*run, *part, *parts),
                Stage::Comparing => "Finished: the model it started from and the fine-tuned ones read the scored digits and MNIST's, on the CPU…".to_string(),
                Stage::Compared(c) => format!("Run {} compared with the model it started from.", short_name(c.run)),
                Stage::Failed(why) => why.to_string(),
            })}</p>
            {move || stage.with(|s| match s {
                Stage::Compared(c) => Some(view! { <BeforeAfter comparison=c.clone() /> }.into_any()),
                _ => None,
            })}
        </div>
    }
    .into_any()
}

/// The mix, the epochs and the digits held out.
#[component]
fn MixForm(choice: RwSignal<MixChoice>) -> impl IntoView {
    let select = move |label: &'static str,
                       testid: &'static str,
                       options: &'static [usize],
                       read: fn(&MixChoice) -> usize,
                       apply: fn(&mut MixChoice, usize)| {
        let change = move |event| {
            if let Ok(value) = event_target_value(&event).parse::<usize>() {
                choice.update(|c| apply(c, value));
            }
        };
        view! {
            <label>{label}
                <select data-testid=testid on:change=change>
                    {options.iter().map(|&n| view! {
                        <option value=n.to_string() selected=move || choice.with(|c| read(c) == n)>{n.to_string()}</option>
                    }).collect_view()}
                </select>
            </label>
        }
    };
    view! {
        <div class="mix-form">
            {select("each of your digits ×", "fine-tune-copies", &COPIES, |c| c.copies, |c, v| c.copies = v)}
            {select("MNIST digits", "fine-tune-mnist", &MNIST, |c| c.mnist, |c, v| c.mnist = v)}
            {select("epochs", "fine-tune-epochs", &EPOCHS, |c| c.epochs, |c, v| c.epochs = v)}
            <label>"scored on "
                <select data-testid="fine-tune-scoring" on:change=move |event| {
                    if let Some(scoring) = Scoring::parse(&event_target_value(&event)) {
                        choice.update(|c| c.scoring = scoring);
                    }
                }>
                    {Scoring::CHOICES.map(|s| view! {
                        <option value=s.value() selected=move || choice.with(|c| c.scoring == s)>{s.label()}</option>
                    }).collect_view()}
                </select>
            </label>
        </div>
    }
}
