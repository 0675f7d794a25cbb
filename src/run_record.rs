//! A run as the runs table keeps it: its plan, where it ran, how far it got, its best and
//! last test accuracy and a thinned history of its curves. Pure: the page stores it as JSON
//! (`web::run_db`, through `web::page_runs`) and draws it (`ui::runs`).

use serde::{Deserialize, Serialize};

use crate::analysis::timeline::Timeline;
use crate::model::ModelConfig;
use crate::protocol::BackendKind;
use crate::run_view::RunView;
use crate::train::{History, TrainingPlan};

/// Chart points a record keeps of each curve: enough to compare runs by eye.
pub const KEPT_POINTS: usize = 300;
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
}

impl RunRecord {
    pub fn new(id: u64, plan: TrainingPlan, started: u64) -> Self {
        Self {
            id,
            started,
            plan,
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

    /// When it started, in milliseconds since 1970.
    pub fn started_ms(&self) -> u64 {
        if self.started == 0 {
            self.id
        } else {
            self.started
        }
    }

    /// Takes in what the panel shows of the run now.
    pub fn update(&mut self, view: &RunView) {
        self.backend = view.backend.or(self.backend);
        if let Some(report) = &view.report {
            self.step = report.point.step;
            self.total_steps = report.total_steps;
        }
        self.history = thinned(&view.history, KEPT_POINTS);
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
        let mix = self.plan.mix.as_ref().map_or_else(String::new, |mix| {
            let mnist = self
                .plan
                .train_limit
                .map_or_else(|| "MNIST".into(), |n| format!("{n} MNIST digits"));
            format!(
                " · fine-tuned on {} of your digits ×{} with {mnist}",
                mix.digits(),
                mix.copies
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

/// `history` with at most `max` step points, evenly spread, the first and the last kept;
/// every evaluation kept (there are few).
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
        evals: history.evals.clone(),
    }
}
