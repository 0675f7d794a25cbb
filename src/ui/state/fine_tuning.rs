//! "Learn my handwriting", between the lab and the training panel: the lab asks for a run
//! that fine-tunes the model in use on a person's digits; the training panel starts it in its
//! worker like any run (its progress, its record in the runs table) and says which run it is,
//! or why it did not start.

use std::rc::Rc;

use leptos::prelude::*;

use crate::train::TrainingPlan;

/// A run the lab asks for: `plan` (with the person's digits) from `weights`.
pub struct FineTuneAsk {
    pub plan: TrainingPlan,
    pub weights: Rc<Vec<u8>>,
}

/// What became of the newest ask.
#[derive(Debug, Clone, PartialEq)]
pub enum FineTuneStart {
    /// Kept as run `0` and sent to the training worker.
    Started(u64),
    Refused(String),
}

#[derive(Clone, Copy)]
pub struct FineTuning {
    /// Taken by the training panel.
    pub asked: RwSignal<Option<Rc<FineTuneAsk>>, LocalStorage>,
    pub started: RwSignal<Option<FineTuneStart>>,
    /// The started run's steps taken and its steps in all, as the training panel shows them.
    pub steps: RwSignal<Option<(usize, usize)>>,
    /// Why the started run failed, if it did.
    pub failed: RwSignal<Option<String>>,
}

impl Default for FineTuning {
    fn default() -> Self {
        Self::new()
    }
}

impl FineTuning {
    pub fn new() -> Self {
        Self {
            asked: RwSignal::new_local(None),
            started: RwSignal::new(None),
            steps: RwSignal::new(None),
            failed: RwSignal::new(None),
        }
    }

    pub fn ask(self, plan: TrainingPlan, weights: Rc<Vec<u8>>) {
        self.started.set(None);
        self.steps.set(None);
        self.failed.set(None);
        self.asked.set(Some(Rc::new(FineTuneAsk { plan, weights })));
    }
}
