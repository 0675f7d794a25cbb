//! "Learn my handwriting": the model in use fine-tuned on the person's set mixed with MNIST,
//! as runs asked of the training panel and awaited (`Training::start`: its worker, its
//! progress, their records in the runs table), scored on digits each run held out
//! (`scoring.rs`); then before and after side by side (measured by `web::before_after`, shown
//! by `before_after.rs`).

mod before_after;
mod scoring;

use std::rc::Rc;

use leptos::prelude::*;

use crate::place::Part;
use leptos::task::spawn_local;

use super::heads_off::thousands;
use crate::data::PersonalSet;
use crate::model::ModelConfig;
use crate::run_store::short_name;
use crate::train::{MAX_MIX_DIGITS, MAX_MIX_IMAGES, PersonalMix, TrainingPlan};
use crate::ui::state::{Handwriting, LabState, RunEnded, RunSteps, StartError, Training};
use crate::web::before_after::{Comparison, Judge, SCORED_TEST_DIGITS, compare};
use before_after::BeforeAfter;
use scoring::Scoring;

/// Times each of the person's digits comes back in an epoch.
const COPIES: [usize; 5] = [5, 10, 20, 50, 100];
/// MNIST training digits mixed in, so that MNIST is not forgotten.
const MNIST: [usize; 5] = [500, 1000, 2000, 5000, 10000];
const EPOCHS: [usize; 3] = [1, 2, 3];
/// The recipe: small steps from where the model is (a tenth of the lab model's peak rate),
/// augmented, as `vit train --init-from … --extra` tried it (`pretrained/README.md`).
const BATCH: usize = 64;
const LEARNING_RATE: f64 = 2e-4;

/// What the person chose.
#[derive(Debug, Clone, Copy, PartialEq)]
struct MixChoice {
    copies: usize,
    mnist: usize,
    epochs: usize,
    scoring: Scoring,
}

impl Default for MixChoice {
    fn default() -> Self {
        Self {
            copies: 20,
            mnist: 2_000,
            epochs: 1,
            scoring: Scoring::HoldOut(4),
        }
    }
}

impl MixChoice {
    fn plan(self, config: ModelConfig, trained: &PersonalSet) -> TrainingPlan {
        TrainingPlan {
            config,
            epochs: self.epochs,
            batch_size: BATCH,
            lr: LEARNING_RATE,
            warmup_epochs: None,
            weight_decay: 0.05,
            label_smoothing: 0.0,
            augment: true,
            seed: 7,
            eval_images: 1_000,
            eval_every: 0,
            distillation: None,
            train_limit: Some(self.mnist),
            mix: Some(Box::new(PersonalMix::new(trained, self.copies))),
        }
    }

    /// Why a set of `digits` cannot be fine-tuned on this way, if it cannot: nothing to learn
    /// from or to score, or a run with more digits or images than a mix may take.
    fn refusal(self, digits: usize) -> Option<String> {
        if !self.scoring.fits(digits) {
            return Some(
                "Teach it a few digits first: some to learn from, and some to score.".into(),
            );
        }
        let largest = self.scoring.largest_run(digits);
        if largest > MAX_MIX_DIGITS {
            return Some(format!(
                "A run learns from at most {} of your digits ({} here): hold more out, or fine-tune on part of the set.",
                thousands(MAX_MIX_DIGITS),
                thousands(largest)
            ));
        }
        let images = largest.saturating_mul(self.copies);
        (images > MAX_MIX_IMAGES).then(|| {
            format!(
                "{} images of yours an epoch is more than the {} a run may take: fewer copies.",
                thousands(images),
                thousands(MAX_MIX_IMAGES)
            )
        })
    }

    /// The mix in words, for a set of `digits`: what an epoch of the model kept takes, and
    /// what is scored.
    fn describe(self, digits: usize) -> String {
        // Counted, not split: this runs at every change of the set or the choice.
        let kept = self.scoring.largest_run(digits);
        let scored = self.scoring.scored(digits);
        let yours = kept * self.copies;
        let images = yours + self.mnist;
        let epoch = format!(
            "{kept} of your digits × {} = {}, with {} MNIST digits ({:.0}% yours), {} steps of {BATCH}.",
            self.copies,
            thousands(yours),
            thousands(self.mnist),
            100.0 * yours as f64 / images.max(1) as f64,
            images.div_ceil(BATCH) * self.epochs
        );
        match self.scoring {
            Scoring::Folds(_) => {
                let folds = self.scoring.folds(digits);
                format!(
                    "{} runs: {folds} that each hold out a fold, then one on every digit, of which an epoch is {epoch} All {scored} scored.",
                    folds + 1
                )
            }
            Scoring::HoldOut(_) => format!("An epoch: {epoch} {scored} held out to score."),
        }
    }
}

/// Where the newest fine-tuning stands.
#[derive(Clone)]
enum Stage {
    Idle,
    /// Run `part` of `parts`, with its steps once the training panel has started it.
    Training {
        run: Option<(u64, RunSteps)>,
        part: usize,
        parts: usize,
    },
    Comparing,
    Compared(Rc<Comparison>),
    Failed(String),
}

impl Stage {
    fn name(&self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Training { .. } => "training",
            Self::Comparing => "comparing",
            Self::Compared(_) => "compared",
            Self::Failed(_) => "failed",
        }
    }

    fn busy(&self) -> bool {
        matches!(self, Self::Training { .. } | Self::Comparing)
    }
}

/// What the runs need: the training panel's door, and which attempt is the newest (a click on
/// "Stop waiting" or a new start leaves an older one behind: it stops quietly and changes
/// nothing shown).
#[derive(Clone, Copy)]
struct Runs {
    training: Training,
    attempt: StoredValue<u32>,
}

/// An attempt left behind.
struct Abandoned;

impl Runs {
    /// Whether attempt `mine` is still the newest.
    fn current(self, mine: u32) -> Result<(), Abandoned> {
        (self.attempt.get_value() == mine)
            .then_some(())
            .ok_or(Abandoned)
    }
}

/// Why an attempt ended without a comparison.
enum Ended {
    Failed(String),
    Abandoned,
}

impl From<String> for Ended {
    fn from(why: String) -> Self {
        Self::Failed(why)
    }
}

impl From<Abandoned> for Ended {
    fn from(_: Abandoned) -> Self {
        Self::Abandoned
    }
}

/// The card's state, kept for the page (provided with the lab's services): a fine-tuning
/// under way, or its comparison, is there again when Handwriting is opened again.
#[derive(Clone, Copy)]
pub struct FineTuneCard {
    choice: RwSignal<MixChoice>,
    stage: RwSignal<Stage, LocalStorage>,
    attempt: StoredValue<u32>,
}

impl FineTuneCard {
    pub fn new() -> Self {
        Self {
            choice: RwSignal::new(MixChoice::default()),
            stage: RwSignal::new_local(Stage::Idle),
            attempt: StoredValue::new(0),
        }
    }
}

impl Default for FineTuneCard {
    fn default() -> Self {
        Self::new()
    }
}

/// The form, the button, and the comparison once the runs have finished.
#[component]
pub(super) fn LearnMyHandwriting() -> impl IntoView {
    let lab = expect_context::<LabState>();
    let handwriting = expect_context::<Handwriting>();
    // Fine-tuning is a run of the page's training panel, kept with its runs: a lab on its own
    // (a test's) has neither, and no such card.
    let Some(training) = use_context::<Training>() else {
        return ().into_any();
    };
    let card = use_context::<FineTuneCard>().unwrap_or_default();
    let runs = Runs {
        training,
        attempt: card.attempt,
    };
    let (choice, stage) = (card.choice, card.stage);
    let refusal = move || choice.with(|c| c.refusal(handwriting.set.with(|s| s.len())));
    let can_start =
        move || refusal().is_none() && lab.engine.with(Option::is_some) && !stage.with(Stage::busy);
    let start = move |_| {
        let (Some(base), Some(config)) = (
            lab.weights.get_value(),
            lab.engine
                .with_untracked(|e| e.as_ref().map(|e| e.config.clone())),
        ) else {
            return;
        };
        let chosen = choice.get_untracked();
        let set = handwriting.set.get_untracked();
        // Busy from the click: a second click, or a look at the stage, never finds the last
        // comparison meanwhile.
        stage.set(Stage::Training {
            run: None,
            part: 1,
            parts: 1,
        });
        runs.attempt.update_value(|a| *a += 1);
        let mine = runs.attempt.get_value();
        spawn_local(async move {
            match learn(runs, mine, (base, config), &set, chosen, stage).await {
                Ok(comparison) => stage.set(Stage::Compared(Rc::new(comparison))),
                Err(Ended::Failed(why)) => stage.set(Stage::Failed(why)),
                Err(Ended::Abandoned) => {}
            }
        });
    };
    let stop_waiting = move |_| {
        runs.attempt.update_value(|a| *a += 1);
        stage.set(Stage::Failed(
            "Stopped waiting: a run under way goes on in the training panel and stays in the runs table.".into(),
        ));
    };
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
                Stage::Idle => refusal().unwrap_or_default(),
                Stage::Training { run, part, parts } => progress(*run, *part, *parts),
                Stage::Comparing => "Finished: the model it started from and the fine-tuned ones read the scored digits and MNIST's, on the CPU…".to_string(),
                Stage::Compared(c) => format!("Run {} compared with the model it started from.", short_name(c.run)),
                Stage::Failed(why) => why.clone(),
            })}</p>
            {move || stage.with(|s| match s {
                Stage::Compared(c) => Some(view! { <BeforeAfter comparison=c.clone() /> }.into_any()),
                _ => None,
            })}
        </div>
    }
    .into_any()
}

/// The runs `chosen` asks for on `set` from the model `base`, one after another, then the
/// comparison.
async fn learn(
    runs: Runs,
    mine: u32,
    (base, config): (Rc<Vec<u8>>, ModelConfig),
    set: &PersonalSet,
    chosen: MixChoice,
    stage: RwSignal<Stage, LocalStorage>,
) -> Result<Comparison, Ended> {
    let (parts, last) = chosen.scoring.parts(set);
    let mut plans: Vec<(TrainingPlan, Option<Vec<usize>>)> = parts
        .into_iter()
        .map(|part| {
            (
                chosen.plan(config.clone(), &part.trained),
                Some(part.scores),
            )
        })
        .collect();
    plans.extend(last.map(|all| (chosen.plan(config.clone(), &all), None)));
    // Every run checked before the first trains: none is refused after others have run.
    for (plan, _) in &plans {
        plan.validate()
            .map_err(|why| format!("This fine-tuning cannot run: {why}."))?;
    }
    let count = plans.len();
    let show = |shown: Stage| -> Result<(), Abandoned> {
        runs.current(mine)?;
        stage.set(shown);
        Ok(())
    };
    let mut judges = Vec::new();
    let mut kept = None;
    for (index, (plan, scores)) in plans.into_iter().enumerate() {
        let part = index + 1;
        let training = |run| Stage::Training {
            run,
            part,
            parts: count,
        };
        show(training(None))?;
        let (run, weights) = train(runs, mine, plan, base.clone(), |run| {
            let _ = show(training(Some(run)));
        })
        .await?;
        let weights = Rc::new(weights);
        if let Some(scores) = scores {
            judges.push(Judge {
                weights: weights.clone(),
                scores,
            });
        }
        kept = Some((run, weights));
    }
    let kept = kept.ok_or_else(|| "there was nothing to learn from".to_string())?;
    show(Stage::Comparing)?;
    let folds = matches!(chosen.scoring, Scoring::Folds(_)).then_some(judges.len());
    let compared = compare((&base, &config), set, &judges, kept, folds)
        .await
        .map_err(|why| format!("The comparison failed: {why}."))?;
    runs.current(mine)?;
    Ok(compared)
}

/// One run asked of the training panel and awaited: told to `started` with its steps once it
/// is kept and sent, then its weights once it has finished. Paused, it is waited for; failed,
/// let go in the training panel (another run took its place), deleted, or never kept, it ends
/// the attempt with that said.
async fn train(
    runs: Runs,
    mine: u32,
    plan: TrainingPlan,
    base: Rc<Vec<u8>>,
    started: impl Fn((u64, RunSteps)),
) -> Result<(u64, Vec<u8>), Ended> {
    let handle = runs
        .training
        .start(plan, base)
        .await
        .map_err(|why: StartError| why.to_string())?;
    runs.current(mine)?;
    let run = handle.run;
    started((run, handle.steps));
    let finished = handle.finished().await;
    runs.current(mine)?;
    let weights = finished.map_err(|ended: RunEnded| format!("Run {} {ended}", short_name(run)))?;
    Ok((run, weights))
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
