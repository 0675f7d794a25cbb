//! Fine-tuning on the person's set ("Learn my handwriting") as a service, kept for the page:
//! the model in use fine-tuned on the set mixed with MNIST, as runs asked of the training
//! panel and awaited ([`Training::start`]: its worker, its progress, their records in the runs
//! table), scored on digits each run held out (`scoring.rs`), then compared before and after
//! (measured by `web::before_after`). A fine-tuning under way, or its comparison, is there
//! again when Handwriting is opened again; the card (`ui/lab/fine_tune/`) only shows it.

mod scoring;

use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::{RunEnded, RunSteps, StartError, Training};
use crate::data::PersonalSet;
use crate::model::ModelConfig;
use crate::run_store::{RunId, short_name};
use crate::train::{MAX_MIX_DIGITS, MAX_MIX_IMAGES, PersonalMix, PlanError, TrainingPlan};
use crate::ui::widgets::thousands;
use crate::web::before_after::{Comparison, ComparisonError, Judge, compare};
pub use scoring::Scoring;

/// Times each of the person's digits comes back in an epoch.
pub const COPIES: [usize; 5] = [5, 10, 20, 50, 100];
/// MNIST training digits mixed in, so that MNIST is not forgotten.
pub const MNIST: [usize; 5] = [500, 1000, 2000, 5000, 10000];
pub const EPOCHS: [usize; 3] = [1, 2, 3];
/// The recipe: small steps from where the model is (a tenth of the lab model's peak rate),
/// augmented, as `vit train --init-from … --extra` tried it (`pretrained/README.md`).
const BATCH: usize = 64;
const LEARNING_RATE: f64 = 2e-4;

/// What the person chose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixChoice {
    pub copies: usize,
    pub mnist: usize,
    pub epochs: usize,
    pub scoring: Scoring,
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

/// Why a set cannot be fine-tuned on with the mix chosen.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error("Teach it a few digits first: some to learn from, and some to score.")]
    FewDigits,
    /// The largest run would learn from this many digits.
    #[error(
        "A run learns from at most {} of your digits ({} here): hold more out, or fine-tune on part of the set.",
        thousands(MAX_MIX_DIGITS),
        thousands(*.0)
    )]
    ManyDigits(usize),
    /// The largest run would take this many of the person's images an epoch.
    #[error(
        "{} images of yours an epoch is more than the {} a run may take: fewer copies.",
        thousands(*.0),
        thousands(MAX_MIX_IMAGES)
    )]
    ManyImages(usize),
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
    pub fn refusal(self, digits: usize) -> Option<Refusal> {
        if !self.scoring.fits(digits) {
            return Some(Refusal::FewDigits);
        }
        let largest = self.scoring.largest_run(digits);
        if largest > MAX_MIX_DIGITS {
            return Some(Refusal::ManyDigits(largest));
        }
        let images = largest.saturating_mul(self.copies);
        (images > MAX_MIX_IMAGES).then_some(Refusal::ManyImages(images))
    }

    /// The mix in words, for a set of `digits`: what an epoch of the model kept takes, and
    /// what is scored.
    pub fn describe(self, digits: usize) -> String {
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

/// Why a fine-tuning ended without a comparison.
#[derive(Debug, thiserror::Error)]
pub enum FineTuneFailure {
    #[error("This fine-tuning cannot run: {0}.")]
    Plan(PlanError),
    #[error(transparent)]
    NotStarted(StartError),
    #[error("Run {} {ended}", short_name(*run))]
    Ended { run: RunId, ended: RunEnded },
    #[error("there was nothing to learn from")]
    NothingToLearn,
    #[error("The comparison failed: {0}.")]
    Comparison(ComparisonError),
    #[error(
        "Stopped waiting: a run under way goes on in the training panel and stays in the runs table."
    )]
    StoppedWaiting,
}

/// Where the newest fine-tuning stands.
#[derive(Clone)]
pub enum Stage {
    Idle,
    /// Run `part` of `parts`, with its steps once the training panel has started it.
    Training {
        run: Option<(RunId, RunSteps)>,
        part: usize,
        parts: usize,
    },
    Comparing,
    Compared(Rc<Comparison>),
    Failed(Rc<FineTuneFailure>),
}

impl Stage {
    /// The stage as the card's `data-stage` names it.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Training { .. } => "training",
            Self::Comparing => "comparing",
            Self::Compared(_) => "compared",
            Self::Failed(_) => "failed",
        }
    }

    pub fn busy(&self) -> bool {
        matches!(self, Self::Training { .. } | Self::Comparing)
    }
}

/// The fine-tuning service, provided once for the page.
#[derive(Clone, Copy)]
pub struct FineTuning {
    /// The mix the person chose.
    pub choice: RwSignal<MixChoice>,
    stage: RwSignal<Stage, LocalStorage>,
    /// Which attempt is the newest: a click on "Stop waiting" or a new start leaves an older
    /// one behind, which stops quietly and changes nothing shown.
    attempt: StoredValue<u32>,
}

impl Default for FineTuning {
    fn default() -> Self {
        Self::new()
    }
}

/// An attempt left behind.
struct Abandoned;

/// Why an attempt ended without a comparison.
enum Ended {
    Failed(FineTuneFailure),
    Abandoned,
}

impl From<FineTuneFailure> for Ended {
    fn from(why: FineTuneFailure) -> Self {
        Self::Failed(why)
    }
}

impl From<Abandoned> for Ended {
    fn from(_: Abandoned) -> Self {
        Self::Abandoned
    }
}

impl FineTuning {
    pub fn new() -> Self {
        Self {
            choice: RwSignal::new(MixChoice::default()),
            stage: RwSignal::new_local(Stage::Idle),
            attempt: StoredValue::new(0),
        }
    }

    /// Where the newest fine-tuning stands.
    pub fn stage(self) -> ReadSignal<Stage, LocalStorage> {
        self.stage.read_only()
    }

    /// Fine-tunes the model `base` (of `config`) on `set` as the choice says, through
    /// `training`: runs one after another, then the comparison. Busy from the call, so a
    /// second click starts nothing.
    pub fn start(
        self,
        training: Training,
        (base, config): (Rc<Vec<u8>>, ModelConfig),
        set: Arc<PersonalSet>,
    ) {
        if self.stage.with_untracked(Stage::busy) {
            return;
        }
        let chosen = self.choice.get_untracked();
        self.stage.set(Stage::Training {
            run: None,
            part: 1,
            parts: 1,
        });
        self.attempt.update_value(|a| *a += 1);
        let mine = self.attempt.get_value();
        spawn_local(async move {
            match self
                .learn(training, mine, (base, config), &set, chosen)
                .await
            {
                Ok(comparison) => self.stage.set(Stage::Compared(Rc::new(comparison))),
                Err(Ended::Failed(why)) => self.stage.set(Stage::Failed(Rc::new(why))),
                Err(Ended::Abandoned) => {}
            }
        });
    }

    /// The card stops waiting: a run under way goes on in the training panel.
    pub fn stop_waiting(self) {
        self.attempt.update_value(|a| *a += 1);
        self.stage
            .set(Stage::Failed(Rc::new(FineTuneFailure::StoppedWaiting)));
    }

    /// Whether attempt `mine` is still the newest.
    fn current(self, mine: u32) -> Result<(), Abandoned> {
        (self.attempt.get_value() == mine)
            .then_some(())
            .ok_or(Abandoned)
    }

    /// Shows `stage` for attempt `mine`, unless it was left behind.
    fn show(self, mine: u32, stage: Stage) -> Result<(), Abandoned> {
        self.current(mine)?;
        self.stage.set(stage);
        Ok(())
    }

    /// The runs `chosen` asks for on `set` from the model `base`, one after another, then the
    /// comparison.
    async fn learn(
        self,
        training: Training,
        mine: u32,
        (base, config): (Rc<Vec<u8>>, ModelConfig),
        set: &PersonalSet,
        chosen: MixChoice,
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
            plan.validate().map_err(FineTuneFailure::Plan)?;
        }
        let count = plans.len();
        let mut judges = Vec::new();
        let mut kept = None;
        for (index, (plan, scores)) in plans.into_iter().enumerate() {
            let part = index + 1;
            let training_stage = |run| Stage::Training {
                run,
                part,
                parts: count,
            };
            self.show(mine, training_stage(None))?;
            let (run, weights) = self
                .train(training, mine, plan, base.clone(), |run| {
                    let _ = self.show(mine, training_stage(Some(run)));
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
        let kept = kept.ok_or(FineTuneFailure::NothingToLearn)?;
        self.show(mine, Stage::Comparing)?;
        let folds = matches!(chosen.scoring, Scoring::Folds(_)).then_some(judges.len());
        let compared = compare((&base, &config), set, &judges, kept, folds)
            .await
            .map_err(FineTuneFailure::Comparison)?;
        self.current(mine)?;
        Ok(compared)
    }

    /// One run asked of the training panel and awaited: told to `started` with its steps once
    /// it is kept and sent, then its weights once it has finished. Paused, it is waited for;
    /// failed, let go in the training panel (another run took its place), deleted, or never
    /// kept, it ends the attempt with that said.
    async fn train(
        self,
        training: Training,
        mine: u32,
        plan: TrainingPlan,
        base: Rc<Vec<u8>>,
        started: impl Fn((RunId, RunSteps)),
    ) -> Result<(RunId, Vec<u8>), Ended> {
        let handle = training
            .start(plan, base)
            .await
            .map_err(FineTuneFailure::NotStarted)?;
        self.current(mine)?;
        let run = handle.run;
        started((run, handle.steps));
        let finished = handle.finished().await;
        self.current(mine)?;
        let weights = finished.map_err(|ended| FineTuneFailure::Ended { run, ended })?;
        Ok((run, weights))
    }
}
