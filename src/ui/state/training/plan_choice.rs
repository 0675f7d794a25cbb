//! The plan chosen in the form, shared by the form that edits it and the trainer that starts
//! it: the plan, its preset (if it is one) and the device.

use leptos::prelude::*;

use crate::model::Preset;
use crate::protocol::BackendKind;
use crate::train::TrainingPlan;

/// What the form holds.
#[derive(Clone, Copy)]
pub struct PlanChoice {
    pub form: RwSignal<TrainingPlan>,
    /// `None` once a field is edited: the plan is then custom.
    pub preset: RwSignal<Option<Preset>>,
    /// The device to train on; none times the two.
    pub backend: RwSignal<Option<BackendKind>>,
    /// The workers a CPU run trains in, where the page's link says (`?cpu-workers=N`); none:
    /// one per core.
    pub cpu_workers: Option<usize>,
}

impl PlanChoice {
    /// The plan a link set (already checked), else the seed preset, on the device and in the
    /// CPU workers the page was asked for.
    pub fn new(
        preferred: Option<BackendKind>,
        initial_plan: Option<TrainingPlan>,
        cpu_workers: Option<usize>,
    ) -> Self {
        let form = initial_plan
            .clone()
            .unwrap_or_else(|| TrainingPlan::in_page(Preset::Seed));
        let preset = match initial_plan {
            None => Some(Preset::Seed),
            Some(plan) => Preset::ALL
                .into_iter()
                .find(|&preset| TrainingPlan::in_page(preset) == plan),
        };
        Self {
            form: RwSignal::new(form),
            preset: RwSignal::new(preset),
            backend: RwSignal::new(preferred),
            cpu_workers,
        }
    }
}
