//! "Learn my handwriting": the model in use fine-tuned on the person's set mixed with MNIST,
//! as a run of the training panel (its worker, its progress, its record in the runs table),
//! every `n`th digit held out; then before and after side by side: the held-out digits and
//! MNIST's first test digits read by both models, and one held-out digit's attention rollout
//! and gradient relevance. The comparison is made in workers of the card's own (a drawing
//! worker on the CPU, an explaining worker), never on the drawing's path.

use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::heads_off::thousands;
use crate::analysis::reading::Reading;
use crate::data::{IMAGE_PIXELS, IMAGE_SIDE, PersonalSet};
use crate::model::{HeadsOff, ModelConfig};
use crate::protocol::BackendKind;
use crate::run_store::short_name;
use crate::train::{PersonalMix, TrainingPlan};
use crate::ui::state::{AppState, FineTuneStart, FineTuning, Handwriting, LabState, RunKeeper};
use crate::ui::widgets::{HeatCanvas, Palette, Sheet, SheetButtons, Tile};
use crate::web::DrawingWorker;
use crate::web::explain::ExplainingWorker;

/// Times each of the person's digits comes back in an epoch.
const COPIES: [usize; 5] = [5, 10, 20, 50, 100];
/// MNIST training digits mixed in, so that MNIST is not forgotten.
const MNIST: [usize; 5] = [500, 1000, 2000, 5000, 10000];
const EPOCHS: [usize; 3] = [1, 2, 3];
/// Every this many digits, one is held out to be scored.
const HELD_OUT_EVERY: [usize; 5] = [2, 3, 4, 5, 10];
/// The recipe: small steps from where the model is (a tenth of the lab model's peak rate),
/// augmented, as `vit train --init-from … --extra` tried it (`pretrained/README.md`).
const BATCH: usize = 64;
const LEARNING_RATE: f64 = 2e-4;
/// MNIST test digits scored before and after: the first test chunk, which the drawing
/// worker fetches.
const SCORED_TEST_DIGITS: u32 = 2_500;

/// What the person chose.
#[derive(Debug, Clone, Copy, PartialEq)]
struct MixChoice {
    copies: usize,
    mnist: usize,
    epochs: usize,
    every: usize,
}

impl Default for MixChoice {
    fn default() -> Self {
        Self {
            copies: 20,
            mnist: 2_000,
            epochs: 1,
            every: 4,
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

    /// The mix in words: what an epoch takes.
    fn describe(self, trained: usize) -> String {
        let yours = trained * self.copies;
        let images = yours + self.mnist;
        format!(
            "An epoch: {trained} of your digits × {} = {}, with {} MNIST digits ({:.0}% yours), {} steps of {BATCH}.",
            self.copies,
            thousands(yours),
            thousands(self.mnist),
            100.0 * yours as f64 / images.max(1) as f64,
            images.div_ceil(BATCH) * self.epochs
        )
    }
}

/// A fine-tuning asked for: what it started from and what it is scored on.
struct Job {
    base: Rc<Vec<u8>>,
    config: ModelConfig,
    held_out: PersonalSet,
}

/// Where the newest fine-tuning stands.
#[derive(Clone)]
enum Stage {
    Idle,
    Asked,
    Training(u64),
    Comparing(u64),
    Compared(Rc<Comparison>),
    Failed(String),
}

impl Stage {
    fn name(&self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Asked => "asked",
            Self::Training(_) => "training",
            Self::Comparing(_) => "comparing",
            Self::Compared(_) => "compared",
            Self::Failed(_) => "failed",
        }
    }

    fn busy(&self) -> bool {
        matches!(self, Self::Asked | Self::Training(_) | Self::Comparing(_))
    }
}

/// One model's reading of the held-out digits and of MNIST's first test digits.
struct Scores {
    reads: Vec<(u8, f32)>,
    right: usize,
    mnist: (u32, u32),
}

/// One held-out digit as each model sees it.
struct DigitMaps {
    image: [u8; IMAGE_PIXELS],
    label: u8,
    /// What each model reads in it.
    read: [u8; 2],
    grid: usize,
    rollout: [Vec<f32>; 2],
    relevance: [Vec<f32>; 2],
}

struct Comparison {
    run: u64,
    held_out: usize,
    before: Scores,
    after: Scores,
    maps: Option<DigitMaps>,
    weights: Vec<u8>,
}

/// The form, the button, and the comparison once the run has finished.
#[component]
pub(super) fn LearnMyHandwriting() -> impl IntoView {
    let app = expect_context::<AppState>();
    let lab = expect_context::<LabState>();
    let handwriting = expect_context::<Handwriting>();
    let fine_tuning = expect_context::<FineTuning>();
    let choice = RwSignal::new(MixChoice::default());
    let stage = RwSignal::new_local(Stage::Idle);
    let job = StoredValue::new_local(None::<Rc<Job>>);
    let split = Memo::new(move |_| {
        let every = choice.with(|c| c.every);
        handwriting.set.with(|set| {
            let (trained, held_out) = set.split_every(every);
            (trained.len(), held_out.len())
        })
    });
    let can_start = move || {
        let (trained, held_out) = split.get();
        trained > 0 && held_out > 0 && lab.engine.with(Option::is_some) && !stage.with(Stage::busy)
    };
    let start = move |_| {
        let (Some(weights), Some(config)) = (
            lab.weights.get_value(),
            lab.engine
                .with_untracked(|e| e.as_ref().map(|e| e.config.clone())),
        ) else {
            return;
        };
        let chosen = choice.get_untracked();
        let (trained, held_out) = handwriting
            .set
            .with_untracked(|s| s.split_every(chosen.every));
        let plan = chosen.plan(config.clone(), &trained);
        job.set_value(Some(Rc::new(Job {
            base: weights.clone(),
            config,
            held_out,
        })));
        stage.set(Stage::Asked);
        fine_tuning.ask(plan, weights);
    };
    // The training panel says which run it started, or why it did not.
    Effect::new(move |_| {
        let Some(started) = fine_tuning.started.get() else {
            return;
        };
        if stage.with_untracked(|s| matches!(s, Stage::Asked)) {
            stage.set(match started {
                FineTuneStart::Started(run) => Stage::Training(run),
                FineTuneStart::Refused(why) => Stage::Failed(why),
            });
        }
    });
    // The run finished (its weights kept): both models compared.
    Effect::new(move |_| {
        let Stage::Training(run) = stage.get() else {
            return;
        };
        let finished = app.keeper.records.with(|records| {
            records.iter().any(|r| {
                r.id == run && r.has_weights && r.total_steps > 0 && r.step >= r.total_steps
            })
        });
        let Some(job) = job.get_value().filter(|_| finished) else {
            return;
        };
        stage.set(Stage::Comparing(run));
        spawn_local(async move {
            let compared = compare(&job, run, app.keeper).await;
            if stage.with_untracked(|s| matches!(s, Stage::Comparing(r) if *r == run)) {
                stage.set(match compared {
                    Ok(comparison) => Stage::Compared(Rc::new(comparison)),
                    Err(why) => Stage::Failed(format!("The comparison failed: {why}.")),
                });
            }
        });
    });
    let progress = move |run: u64| {
        let name = short_name(run);
        match (fine_tuning.failed.get(), fine_tuning.steps.get()) {
            (Some(why), _) => format!("Run {name} stopped: {why}"),
            (None, Some((step, total))) => format!(
                "Fine-tuning as run {name}: step {step} of {total} (its charts are in the training panel)."
            ),
            (None, None) => format!("Fine-tuning as run {name}: fetching MNIST's digits…"),
        }
    };
    view! {
        <div class="fine-tune" data-testid="fine-tune" data-stage=move || stage.with(|s| s.name())>
            <h3>"Learn my handwriting"</h3>
            <p class="hint">
                "Fine-tunes the model in use on your digits, augmented and mixed with MNIST's so that MNIST is not forgotten, as a run of the training panel (kept in the runs table like any other). Every few digits one is held out: it is scored before and after, with MNIST's first "
                {thousands(SCORED_TEST_DIGITS as usize)}" test digits."
            </p>
            <MixForm choice=choice />
            <p class="caption" data-testid="fine-tune-mix">{move || {
                let (trained, held_out) = split.get();
                format!("{} {held_out} held out to score.", choice.get().describe(trained))
            }}</p>
            <div class="buttons">
                <button class="primary" data-testid="fine-tune-start" prop:disabled=move || !can_start() on:click=start>
                    "Learn my handwriting"
                </button>
            </div>
            <p class="teach-said" data-testid="fine-tune-status" role="status">{move || stage.with(|s| match s {
                Stage::Idle => match split.get() {
                    (0, _) | (_, 0) => "Teach it a few digits first: some to learn from, one held out at least.".to_string(),
                    _ => String::new(),
                },
                Stage::Asked => "Starting…".to_string(),
                Stage::Training(run) => progress(*run),
                Stage::Comparing(run) => format!("Run {} finished: both models read your held-out digits and MNIST's, on the CPU…", short_name(*run)),
                Stage::Compared(c) => format!("Run {} compared with the model it started from.", short_name(c.run)),
                Stage::Failed(why) => why.clone(),
            })}</p>
            {move || stage.with(|s| match s {
                Stage::Compared(c) => Some(view! { <BeforeAfter comparison=c.clone() /> }.into_any()),
                _ => None,
            })}
        </div>
    }
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
            {select("hold out 1 digit in", "fine-tune-every", &HELD_OUT_EVERY, |c| c.every, |c, v| c.every = v)}
        </div>
    }
}

/// The scores before and after, one digit's maps, and the fine-tuned model to draw with.
#[component]
fn BeforeAfter(comparison: Rc<Comparison>) -> impl IntoView {
    let app = expect_context::<AppState>();
    let c = comparison.clone();
    let held_out = c.held_out;
    let personal = |s: &Scores| {
        format!(
            "{} of {held_out} ({:.0}%)",
            s.right,
            100.0 * s.right as f64 / held_out.max(1) as f64
        )
    };
    let mnist = |s: &Scores| format!("{:.2}%", 100.0 * s.mnist.0 as f64 / s.mnist.1.max(1) as f64);
    let fraction = |right: usize| format!("{right}/{held_out}");
    let mnist_fraction = |s: &Scores| format!("{}/{}", s.mnist.0, s.mnist.1);
    let weights = StoredValue::new_local(c.weights.clone());
    let run = c.run;
    let use_it = move |_| {
        let bytes = weights.get_value();
        app.use_weights((bytes, format!("fine-tuned run {}", short_name(run))));
    };
    view! {
        <table class="before-after" data-testid="fine-tune-scores">
            <thead><tr><th></th><th>"before"</th><th>"after"</th></tr></thead>
            <tbody>
                <tr data-testid="fine-tune-personal" data-before=fraction(c.before.right) data-after=fraction(c.after.right)>
                    <th>{format!("your {held_out} held-out digits")}</th>
                    <td>{personal(&c.before)}</td><td>{personal(&c.after)}</td>
                </tr>
                <tr data-testid="fine-tune-test" data-before=mnist_fraction(&c.before) data-after=mnist_fraction(&c.after)>
                    <th>{format!("MNIST's first {} test digits", thousands(c.before.mnist.1 as usize))}</th>
                    <td>{mnist(&c.before)}</td><td>{mnist(&c.after)}</td>
                </tr>
            </tbody>
        </table>
        {c.maps.as_ref().map(|maps| view! { <DigitBeforeAfter maps=maps_sheet(maps) /> })}
        {c.maps.is_none().then(|| view! { <p class="hint">"Attention rollout and gradient relevance are a ViT's: this model has neither."</p> })}
        <div class="buttons">
            <button data-testid="fine-tune-use" on:click=use_it>"Draw with the fine-tuned model"</button>
        </div>
    }
}

/// The digit, its rollout and its relevance before and after.
fn maps_sheet(maps: &DigitMaps) -> Sheet {
    let tile = |label: String, values: Vec<f32>, grid: usize, palette: Palette| Tile {
        label,
        values,
        grid,
        palette,
    };
    let grey = maps.image.iter().map(|&p| f32::from(p)).collect();
    let [rollout_before, rollout_after] = maps.rollout.clone();
    let [relevance_before, relevance_after] = maps.relevance.clone();
    let label = maps.label;
    let [before, after] = maps.read;
    Sheet {
        title: format!(
            "A held-out {label}: attention rollout and gradient relevance for {label}, before and after fine-tuning"
        ),
        tiles: vec![
            tile(format!("your {label}"), grey, IMAGE_SIDE, Palette::Grey),
            tile(
                format!("rollout before (reads {before})"),
                rollout_before,
                maps.grid,
                Palette::Heat,
            ),
            tile(
                format!("rollout after (reads {after})"),
                rollout_after,
                maps.grid,
                Palette::Heat,
            ),
            tile(
                format!("relevance for {label} before"),
                relevance_before,
                maps.grid,
                Palette::Heat,
            ),
            tile(
                format!("relevance for {label} after"),
                relevance_after,
                maps.grid,
                Palette::Heat,
            ),
        ],
        columns: 5,
        numbers: false,
    }
}

#[component]
fn DigitBeforeAfter(maps: Sheet) -> impl IntoView {
    let tiles = maps.tiles.clone();
    let title = maps.title.clone();
    let sheet = StoredValue::new(maps);
    view! {
        <figure class="before-after-maps" data-testid="fine-tune-maps">
            <div class="explain-maps">
                {tiles.into_iter().map(|tile| {
                    let values = Signal::derive({
                        let values = tile.values.clone();
                        move || values.clone()
                    });
                    view! {
                        <figure>
                            <HeatCanvas values=values grid=tile.grid size=112 palette=tile.palette title=tile.label.clone() />
                            <figcaption>{tile.label}</figcaption>
                        </figure>
                    }
                }).collect_view()}
            </div>
            <figcaption>{title}" "<SheetButtons sheet=Callback::new(move |()| Some(sheet.get_value())) name="fine-tune-maps" /></figcaption>
        </figure>
    }
}

/// Both models read the held-out digits and MNIST's first test digits in a drawing worker of
/// the card's own; for a ViT, the first held-out digit that fine-tuning set right (else the
/// first) is explained by both.
async fn compare(job: &Job, run: u64, keeper: RunKeeper) -> Result<Comparison, String> {
    let text = |error: &dyn std::fmt::Display| error.to_string();
    let weights = keeper.weights(run).await?;
    let worker = DrawingWorker::spawn(BackendKind::Cpu).map_err(|e| text(&e))?;
    worker.load(&job.base).await.map_err(|e| text(&e))?;
    let before = scores(&worker, &job.held_out).await?;
    worker.load(&weights).await.map_err(|e| text(&e))?;
    let after = scores(&worker, &job.held_out).await?;
    let labels = &job.held_out.labels;
    let set_right = (0..labels.len())
        .find(|&k| before.reads[k].0 != labels[k] && after.reads[k].0 == labels[k]);
    let maps = match (
        job.config.vit(),
        set_right.or((!labels.is_empty()).then_some(0)),
    ) {
        (Some(vit), Some(k)) => {
            let image = job.held_out.images[k];
            let label = labels[k];
            let rollout_after = rollout(&worker, &image, &job.config).await?;
            worker.load(&job.base).await.map_err(|e| text(&e))?;
            let rollout_before = rollout(&worker, &image, &job.config).await?;
            let explaining = ExplainingWorker::spawn().map_err(|e| text(&e))?;
            let mut relevance = Vec::with_capacity(2);
            for model in [&job.base[..], &weights[..]] {
                explaining.keep(model).await.map_err(|e| text(&e))?;
                let explained = explaining
                    .explain(&image, BackendKind::Cpu, Some(label))
                    .await
                    .map_err(|e| text(&e))?;
                relevance.push(explained.relevance);
            }
            let relevance_after = relevance.pop().unwrap_or_default();
            let relevance_before = relevance.pop().unwrap_or_default();
            Some(DigitMaps {
                image,
                label,
                read: [before.reads[k].0, after.reads[k].0],
                grid: vit.grid_size(),
                rollout: [rollout_before, rollout_after],
                relevance: [relevance_before, relevance_after],
            })
        }
        _ => None,
    };
    Ok(Comparison {
        run,
        held_out: labels.len(),
        before,
        after,
        maps,
        weights,
    })
}

/// What the model loaded in `worker` reads in `held_out` and in MNIST's first test digits.
async fn scores(worker: &DrawingWorker, held_out: &PersonalSet) -> Result<Scores, String> {
    let mut reads = Vec::with_capacity(held_out.len());
    // A few hundred at a time, as the gallery reads them.
    for part in held_out.images.chunks(250) {
        reads.extend(worker.read(part).await.map_err(|e| e.to_string())?);
    }
    let right = reads
        .iter()
        .zip(&held_out.labels)
        .filter(|((digit, _), label)| digit == *label)
        .count();
    let mnist = worker
        .score(SCORED_TEST_DIGITS)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Scores {
        reads,
        right,
        mnist,
    })
}

/// The attention rollout of `image` in the model loaded in `worker`.
async fn rollout(
    worker: &DrawingWorker,
    image: &[u8; IMAGE_PIXELS],
    config: &ModelConfig,
) -> Result<Vec<f32>, String> {
    let packed = worker
        .classify(image, HeadsOff::default())
        .await
        .map_err(|e| e.to_string())?;
    Reading::from_packed(&packed, config)
        .map(|reading| reading.rollout)
        .ok_or_else(|| "the reading came back the wrong size".to_string())
}
