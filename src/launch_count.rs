//! The GPU kernels a piece of work launches, counted through CubeCL's launch observer: on a
//! GPU a model this small is bound by the number of dispatches, not by arithmetic, so their
//! count is the figure that carries from one machine to another (`vit bench --device gpu`).

#[cfg(feature = "gpu")]
use std::collections::HashMap;
#[cfg(feature = "gpu")]
use std::sync::{Arc, Mutex};

#[cfg(feature = "gpu")]
use cubecl_runtime::logging::{LaunchObservation, LaunchObserver};

#[cfg(feature = "gpu")]
#[derive(Default)]
struct Counter(Mutex<HashMap<&'static str, usize>>);

#[cfg(feature = "gpu")]
impl LaunchObserver for Counter {
    fn launched(&self, kernel: &'static str) {
        if let Ok(mut counts) = self.0.lock() {
            *counts.entry(kernel).or_default() += 1;
        }
    }
}

/// A kernel's name without module paths, and without its generic arguments when they would
/// make it long: `KernelBinop<MulOp>`, `MatmulEntry<…>`.
pub fn short_name(name: &str) -> String {
    let mut short = String::with_capacity(name.len());
    let mut word = String::new();
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            word.clear();
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            short.push_str(&word);
            word.clear();
            short.push(c);
        }
    }
    short.push_str(&word);
    match short.find('<') {
        Some(open) if short.len() > 40 => format!("{}<…>", &short[..open]),
        _ => short,
    }
}

/// Kernel launches, in all and per kernel name (most launched first).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Launches {
    pub total: usize,
    pub by_kernel: Vec<(String, usize)>,
}

/// Runs `work` and counts the kernels it launches. With Burn's fusion, kernels launch when
/// their results are needed: `work` should read its result back.
#[cfg(feature = "gpu")]
pub fn count_launches<T>(work: impl FnOnce() -> T) -> (T, Launches) {
    let counter = Arc::new(Counter::default());
    let observation = LaunchObservation::new(counter.clone());
    let result = work();
    drop(observation);
    let counts = counter.0.lock().map(|c| c.clone()).unwrap_or_default();
    let mut merged: HashMap<String, usize> = HashMap::new();
    for (name, count) in counts {
        *merged.entry(short_name(name)).or_default() += count;
    }
    let mut by_kernel: Vec<(String, usize)> = merged.into_iter().collect();
    by_kernel.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let total = by_kernel.iter().map(|(_, count)| count).sum();
    (result, Launches { total, by_kernel })
}
