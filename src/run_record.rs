//! A run as the runs table keeps it: its plan, where it ran, how far it got, its best and
//! last test accuracy and a thinned history of its curves. Pure: the page stores it as JSON
//! (`web::run_db`, through `web::page_runs`) and draws it (`ui::runs`).

use serde::{Deserialize, Serialize};

use crate::analysis::timeline::Timeline;
use crate::model::ModelConfig;
use crate::protocol::BackendKind;
use crate::train::{History, StepReport, TrainingPlan};

/// Chart points a record keeps of each curve: enough to compare runs by eye.
pub const KEPT_POINTS: usize = 300;
/// Evaluations a record keeps: every one of a run of the page's plans; past this, spread evenly
/// (a long run evaluating often would otherwise grow its record without bound).
pub const KEPT_EVALS: usize = 200;
/// The most a record may take as JSON: the store reads back nothing larger. A record at every
/// cap (a fine-tuning on the most digits, the longest history, the largest timeline) takes far
/// less (`tests/native/run_record.rs`).
pub const MAX_RECORD_BYTES: usize = 1 << 20;

/// What a record keeps of a fine-tuning's mix: how many of the person's digits and how often,
/// never the digits themselves (they are in the run's checkpoint, which continues it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MixCounts {
    pub digits: usize,
    pub copies: usize,
}

/// How far a run got, as the panel shows it (`crate::run_view::RunView::progress`): what its
/// record takes in.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    pub backend: Option<BackendKind>,
    pub report: Option<&'a StepReport>,
    pub history: &'a History,
    pub timeline: &'a Timeline,
}

/// A record that does not fit [`MAX_RECORD_BYTES`] even thinned: its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("its record takes {0} bytes")]
pub struct RecordTooLarge(pub usize);
/// Runs the table reads back: far more than a person keeps, few enough to read at once.
pub const MAX_RUNS: usize = 1_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Its name in the store, drawn at random (`run_store`); runs kept by pages before the
    /// store were named by their start time.
    pub id: u64,
    /// When it started, in milliseconds since 1970 (0 in records from before the store, whose
    /// id is that time).
    #[serde(default)]
    pub started: u64,
    pub plan: TrainingPlan,
    pub backend: Option<BackendKind>,
    pub step: usize,
    pub total_steps: usize,
    pub best_test: Option<f32>,
    pub last_test: Option<f32>,
    pub history: History,
    /// Its weights are kept beside it (saved at a pause, a stop or the end).
    pub has_weights: bool,
    /// Its checkpoint is kept beside it: the run can be continued from the table.
    #[serde(default)]
    pub has_checkpoint: bool,
    /// The probes' attention at each evaluation, to replay.
    #[serde(default)]
    pub timeline: Timeline,
    /// Bumped by the store at every keeping of the run: a keeping names the revision it
    /// continues from, and one whose base is not the stored revision is refused (another tab
    /// moved the run meanwhile). 0 in records from before revisions.
    #[serde(default)]
    pub revision: u64,
    /// A fine-tuning's mix, counted (its plan keeps no digits: see [`RunRecord::new`]).
    #[serde(default)]
    pub mix: Option<MixCounts>,
}

impl RunRecord {
    /// A run of `plan`. A fine-tuning's digits stay out of its record: it keeps their count,
    /// and its checkpoint (which a run needs to continue anyway) keeps the digits.
    pub fn new(id: u64, mut plan: TrainingPlan, started: u64) -> Self {
        let mix = plan.mix.take().map(|mix| MixCounts {
            digits: mix.digits(),
            copies: mix.copies,
        });
        Self {
            id,
            started,
            plan,
            mix,
            backend: None,
            step: 0,
            total_steps: 0,
            best_test: None,
            last_test: None,
            history: History::default(),
            has_weights: false,
            has_checkpoint: false,
            timeline: Timeline::default(),
            revision: 0,
        }
    }

    /// Whether the run fine-tunes on a person's digits (from weights it was given: it can
    /// only go on from its checkpoint).
    pub fn fine_tunes(&self) -> bool {
        self.mix.is_some() || self.plan.mix.is_some()
    }

    /// The record as JSON no larger than [`MAX_RECORD_BYTES`]: a big model's timeline is
    /// halved until it fits.
    pub fn to_kept_json(&self) -> Result<String, RecordTooLarge> {
        let json = |record: &RunRecord| serde_json::to_string(record).unwrap_or_default();
        let mut text = json(self);
        let mut fitted = self.clone();
        while text.len() > MAX_RECORD_BYTES && !fitted.timeline.snapshots.is_empty() {
            if fitted.timeline.snapshots.len() == 1 {
                fitted.timeline.snapshots.clear();
            } else {
                fitted.timeline.halve();
            }
            text = json(&fitted);
        }
        match text.len() {
            0 => Err(RecordTooLarge(0)),
            n if n > MAX_RECORD_BYTES => Err(RecordTooLarge(n)),
            _ => Ok(text),
        }
    }

    /// When it started, in milliseconds since 1970.
    pub fn started_ms(&self) -> u64 {
        if self.started == 0 {
            self.id
        } else {
            self.started
        }
    }

    /// Takes in how far the run got, as the panel shows it now.
    pub fn update(&mut self, view: Progress<'_>) {
        self.backend = view.backend.or(self.backend);
        if let Some(report) = view.report {
            self.step = report.point.step;
            self.total_steps = report.total_steps;
        }
        self.history = thinned(view.history, KEPT_POINTS);
        self.timeline = view.timeline.clone();
        self.last_test = view.history.evals.last().map(|e| e.accuracy);
        self.best_test = view
            .history
            .evals
            .iter()
            .map(|e| e.accuracy)
            .fold(None, |best: Option<f32>, a| {
                Some(best.map_or(a, |b| b.max(a)))
            });
    }

    /// The plan in one line, as the table shows it.
    pub fn summary(&self) -> String {
        let model = match &self.plan.config {
            ModelConfig::Vit(c) => format!(
                "depth {}, dim {}, {} heads, patch {}, MLP {}",
                c.depth, c.dim, c.heads, c.patch_size, c.mlp_dim
            ),
            ModelConfig::Cnn { cnn } => format!(
                "CNN {:?}, kernel {}, hidden {}",
                cnn.widths, cnn.kernel_size, cnn.hidden
            ),
        };
        // Records from before the counts carry the mix in their plan.
        let counts = self.mix.or_else(|| {
            self.plan.mix.as_ref().map(|mix| MixCounts {
                digits: mix.digits(),
                copies: mix.copies,
            })
        });
        let mix = counts.map_or_else(String::new, |mix| {
            let mnist = self
                .plan
                .train_limit
                .map_or_else(|| "MNIST".into(), |n| format!("{n} MNIST digits"));
            format!(
                " · fine-tuned on {} of your digits ×{} with {mnist}",
                mix.digits, mix.copies
            )
        });
        format!(
            "{model} · lr {:.0e}, batch {}, {} epochs{} · seed {}{mix}",
            self.plan.lr,
            self.plan.batch_size,
            self.plan.epochs,
            if self.plan.augment { ", augmented" } else { "" },
            self.plan.seed
        )
    }
}

/// `history` with at most `max` step points and [`KEPT_EVALS`] evaluations, each evenly
/// spread, the first and the last kept.
pub fn thinned(history: &History, max: usize) -> History {
    let steps = &history.steps;
    let kept = if steps.len() <= max || max < 2 {
        steps.clone()
    } else {
        (0..max)
            .map(|i| steps[i * (steps.len() - 1) / (max - 1)])
            .collect()
    };
    History {
        steps: kept,
        evals: spread(&history.evals, KEPT_EVALS),
    }
}

/// At most `max` of `points`, evenly spread, the first and the last kept.
fn spread<T: Copy>(points: &[T], max: usize) -> Vec<T> {
    if points.len() <= max || max < 2 {
        return points.to_vec();
    }
    (0..max)
        .map(|i| points[i * (points.len() - 1) / (max - 1)])
        .collect()
}
