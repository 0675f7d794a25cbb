//! The learning rate by step: warm-up, then cosine decay (or constant, as the seed trains).

/// Linear warm-up to `peak`, then cosine decay to `floor` at `total_steps`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LrSchedule {
    pub peak: f64,
    pub floor: f64,
    pub warmup_steps: usize,
    pub total_steps: usize,
}

impl LrSchedule {
    /// A constant rate, as the seed trains.
    pub fn constant(lr: f64) -> Self {
        Self {
            peak: lr,
            floor: lr,
            warmup_steps: 0,
            total_steps: 0,
        }
    }

    /// The rate for step `step` (0-based).
    pub fn at(&self, step: usize) -> f64 {
        if step < self.warmup_steps {
            return self.peak * (step + 1) as f64 / self.warmup_steps as f64;
        }
        if self.total_steps <= self.warmup_steps {
            return self.peak;
        }
        let progress =
            (step - self.warmup_steps) as f64 / (self.total_steps - self.warmup_steps) as f64;
        let cosine = 0.5 * (1.0 + (std::f64::consts::PI * progress.min(1.0)).cos());
        self.floor + (self.peak - self.floor) * cosine
    }
}
