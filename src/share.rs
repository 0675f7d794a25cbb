//! An experiment as a link: the training plan, its seed, the device and the view (the model
//! and the attention map shown large) in the page's query string. Read strictly: a value
//! that does not parse, or a plan that cannot run, is named in a message and ignored, never
//! applied. Pure: the page hands in the query's pairs.

use crate::analysis::MapChoice;
use crate::model::{HeadsOff, Preset, Replacement, VitConfig};
use crate::protocol::BackendKind;
use crate::train::{CpuWorkers, TrainingPlan};
use crate::weights::cut;

/// What a link sets; `None` where it sets nothing (or nothing usable).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Experiment {
    /// The plan, when the link names any part of it and the whole can run in the page.
    pub plan: Option<TrainingPlan>,
    pub map: Option<MapChoice>,
    /// Heads switched off (`off=2.3,5.7`, counted from 1) and what replaces them
    /// (`off-by=mean` or `zero`).
    pub heads_off: Option<HeadsOff>,
    /// The workers a CPU run trains in (`cpu-workers=N`, 1 to 8), where the link says.
    pub cpu_workers: Option<usize>,
}

/// How the lab is viewed: the map shown large and the heads switched off.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    pub map: MapChoice,
    pub heads_off: HeadsOff,
}

/// Pairs of a query read at most: a link is a few hundred characters.
const MAX_PAIRS: usize = 64;
/// Problems named before "and N more".
const SHOWN_PROBLEMS: usize = 4;
/// Characters of a value from a link shown in a message.
const SHOWN_CHARS: usize = 24;

/// The plan's parts a link may set, beside `preset`, `map`, `weights` and `backend`.
const PLAN_KEYS: [&str; 11] = [
    "depth", "dim", "heads", "patch", "mlp", "lr", "batch", "epochs", "augment", "seed", "images",
];

impl Experiment {
    /// Reads the query's `(key, value)` pairs; what it sets, and what it ignored and why.
    /// Keys of other uses (and `weights`, `backend`, which the page reads itself) pass.
    pub fn read(pairs: &[(String, String)]) -> (Self, Vec<String>) {
        let mut problems = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        let value_of = |key: &str| pairs.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v);
        for (key, _) in pairs {
            let ours = ["preset", "map", "off", "off-by", "cpu-workers"].contains(&key.as_str())
                || PLAN_KEYS.contains(&key.as_str());
            if ours && !seen.insert(key.as_str()) {
                problems.push(format!(
                    "{key} is given more than once: the last one counts"
                ));
            }
        }
        let ignored = |key: &str, value: &str, why: &str| {
            format!("{key}={}: {why}; ignored", cut(value, SHOWN_CHARS))
        };

        let preset = value_of("preset").and_then(|text| {
            let preset = Preset::parse(text);
            if preset.is_none() {
                problems.push(ignored("preset", text, "not `seed` or `lab`"));
            }
            preset
        });
        let mut plan = TrainingPlan::in_page(preset.unwrap_or(Preset::Seed));
        let mut named = preset.is_some();
        for key in PLAN_KEYS {
            let Some(text) = value_of(key) else { continue };
            named = true;
            if let Err(why) = set_part(&mut plan, key, text.trim()) {
                problems.push(ignored(key, text, why));
            }
        }
        let plan = match (named, plan.validate()) {
            (false, _) => None,
            (true, Ok(())) => Some(plan),
            (true, Err(error)) => {
                problems.push(format!(
                    "the link's plan cannot run ({}); the form keeps its own",
                    cut(&error.to_string(), 4 * SHOWN_CHARS)
                ));
                None
            }
        };
        let map = value_of("map").and_then(|text| {
            let map = MapChoice::from_param(text);
            if map.is_none() {
                problems.push(ignored(
                    "map",
                    text,
                    "not `rollout`, `layer-L` or `head-L-H`",
                ));
            }
            map
        });
        let replacement = value_of("off-by").map_or(Some(Replacement::Mean), |text| {
            let replacement = Replacement::from_param(text);
            if replacement.is_none() {
                problems.push(ignored("off-by", text, "not `mean` or `zero`"));
            }
            replacement
        });
        let heads_off = match (value_of("off"), replacement) {
            (Some(text), Some(replacement)) => match HeadsOff::from_param(text, replacement) {
                Ok(off) => Some(off),
                Err(why) => {
                    problems.push(ignored("off", text, why));
                    None
                }
            },
            _ => None,
        };
        let cpu_workers = value_of("cpu-workers").and_then(|text| {
            CpuWorkers::parse(text)
                .map_err(|why| problems.push(ignored("cpu-workers", text, why)))
                .ok()
        });
        let experiment = Self {
            plan,
            map,
            heads_off,
            cpu_workers,
        };
        (experiment, brief(problems))
    }

    /// The query string (no `?`) of `plan` run on `backend` (none: the faster), in
    /// `cpu_workers` on the CPU (none: one per core), viewed as `view` says on the model at
    /// `weights` (none: one that has no link, such as an upload).
    pub fn query(
        plan: &TrainingPlan,
        (backend, cpu_workers): (Option<BackendKind>, Option<usize>),
        view: &View,
        weights: Option<&str>,
    ) -> String {
        let preset = Preset::ALL
            .into_iter()
            .find(|&preset| same_recipe(&TrainingPlan::in_page(preset), plan))
            .unwrap_or(Preset::Seed);
        let mut pairs = vec![("preset", preset.name().to_string())];
        // A CNN has no ViT sizes to carry; its preset says its shape.
        if let Some(c) = plan.config.vit() {
            pairs.extend([
                ("depth", c.depth.to_string()),
                ("dim", c.dim.to_string()),
                ("heads", c.heads.to_string()),
                ("patch", c.patch_size.to_string()),
                ("mlp", c.mlp_dim.to_string()),
            ]);
        }
        pairs.extend([
            ("lr", plan.lr.to_string()),
            ("batch", plan.batch_size.to_string()),
            ("epochs", plan.epochs.to_string()),
            ("augment", u8::from(plan.augment).to_string()),
            ("seed", plan.seed.to_string()),
            ("map", view.map.to_param()),
        ]);
        if !view.heads_off.is_empty() {
            pairs.push(("off", view.heads_off.to_param()));
            pairs.push(("off-by", view.heads_off.replacement.param().to_string()));
        }
        if let Some(images) = plan.train_limit {
            pairs.push(("images", images.to_string()));
        }
        if let Some(backend) = backend {
            pairs.push(("backend", backend.param().to_string()));
        }
        if let Some(workers) = cpu_workers {
            pairs.push(("cpu-workers", workers.to_string()));
        }
        if let Some(weights) = weights {
            pairs.push(("weights", weights.to_string()));
        }
        form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish()
    }

    /// [`Experiment::read`] of a query string (with or without its `?`).
    pub fn read_query(query: &str) -> (Self, Vec<String>) {
        let pairs: Vec<(String, String)> =
            form_urlencoded::parse(query.trim_start_matches('?').as_bytes())
                .into_owned()
                .take(MAX_PAIRS)
                .collect();
        Self::read(&pairs)
    }
}

/// Sets one part of `plan` from a link's text; why not, if it cannot.
fn set_part(plan: &mut TrainingPlan, key: &str, text: &str) -> Result<(), &'static str> {
    let whole = || {
        text.parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or("not a whole number above 0")
    };
    let vit =
        |plan: &mut TrainingPlan, set: fn(&mut VitConfig, usize)| -> Result<(), &'static str> {
            let c = plan.config.vit_mut().ok_or("not a size of this model")?;
            set(c, whole()?);
            Ok(())
        };
    match key {
        "depth" => vit(plan, |c, n| c.depth = n)?,
        "dim" => vit(plan, |c, n| c.dim = n)?,
        "heads" => vit(plan, |c, n| c.heads = n)?,
        "patch" => vit(plan, |c, n| c.patch_size = n)?,
        "mlp" => vit(plan, |c, n| c.mlp_dim = n)?,
        "batch" => plan.batch_size = whole()?,
        "images" => plan.train_limit = Some(whole()?),
        "epochs" => plan.epochs = whole()?,
        "lr" => {
            plan.lr = text
                .parse::<f64>()
                .ok()
                .filter(|lr| lr.is_finite() && *lr > 0.0 && *lr <= 1.0)
                .ok_or("not a learning rate in (0, 1]")?
        }
        "augment" => {
            plan.augment = match text {
                "1" | "true" | "on" => true,
                "0" | "false" | "off" => false,
                _ => return Err("not 1 or 0"),
            }
        }
        "seed" => plan.seed = text.parse().map_err(|_| "not a whole number below 2^64")?,
        _ => unreachable!("only the plan's keys are set"),
    }
    Ok(())
}

/// The parts of a plan the form does not show: a link's preset carries them.
fn same_recipe(a: &TrainingPlan, b: &TrainingPlan) -> bool {
    a.warmup_epochs == b.warmup_epochs
        && a.weight_decay == b.weight_decay
        && a.label_smoothing == b.label_smoothing
        && a.eval_images == b.eval_images
        && a.eval_every == b.eval_every
}

/// The first problems, then how many more.
fn brief(mut problems: Vec<String>) -> Vec<String> {
    if problems.len() > SHOWN_PROBLEMS {
        let more = problems.len() - SHOWN_PROBLEMS;
        problems.truncate(SHOWN_PROBLEMS);
        problems.push(format!("and {more} more"));
    }
    problems
}
