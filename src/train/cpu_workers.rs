//! How many workers share a CPU step in the browser: the training worker and its helpers, one
//! per core, never more than the shards a batch is cut into, fewer where the device has little
//! memory, or as many as a link asks. Pure: the worker hands in what the browser says.

/// The fewest images a shard holds: a batch of fewer than twice this runs whole. Each shard is
/// a forward and backward pass of its own, which costs about 1.5 ms more in the page's worker
/// than its images do: the seed preset's batch of 64 in shards of 8 trained at 758 images/s in
/// one worker and 1,031 in two, in shards of 16 at 806 and 1,295 (`bench-train.mjs`, this
/// 2-core machine; 847 and 1,363 as halves). A batch of 64 so shares out among 4 workers at
/// most, one of 128 among 8.
pub const MIN_SHARD: usize = 16;
/// The most shards a batch is cut into, and so the most workers that share a step.
pub const MAX_SHARDS: usize = 8;
/// Gibibytes of device memory (`navigator.deviceMemory`) per worker: each is a wasm instance
/// of its own, with a copy of the model and its graph, and a phone short of memory ends tabs.
const GIB_PER_WORKER: f64 = 1.0;

/// The shards a batch of `batch` images is cut into on the CPU: each of [`MIN_SHARD`] images
/// or more, at most [`MAX_SHARDS`].
pub fn shards_of(batch: usize) -> usize {
    (batch / MIN_SHARD).clamp(1, MAX_SHARDS)
}

/// What the browser says of the machine, and what the page was asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuWorkers {
    /// `navigator.hardwareConcurrency`.
    pub cores: usize,
    /// `navigator.deviceMemory`, in GiB, where the browser says it (Chromium does, rounded
    /// down to 0.25, 0.5, 1, 2, 4 or 8).
    pub memory_gib: Option<f64>,
    /// `?cpu-workers=N`, read by [`CpuWorkers::parse`].
    pub asked: Option<usize>,
}

impl CpuWorkers {
    /// The workers that share a step of `batch` images: as many as asked, else one per core,
    /// and no more than [`GIB_PER_WORKER`] allows; never more than the batch has shards, never
    /// fewer than one.
    pub fn for_batch(self, batch: usize) -> usize {
        let workers = self.asked.unwrap_or_else(|| {
            let by_memory = self
                .memory_gib
                .filter(|gib| gib.is_finite() && *gib >= 0.0)
                .map_or(usize::MAX, |gib| (gib / GIB_PER_WORKER) as usize);
            self.cores.min(by_memory)
        });
        workers.clamp(1, shards_of(batch))
    }

    /// The helpers to start for a step of `batch` images: the workers but the training one.
    pub fn helpers_for(self, batch: usize) -> usize {
        self.for_batch(batch) - 1
    }

    /// `?cpu-workers=N`'s value: a whole number from 1 to [`MAX_SHARDS`]; why not, where it
    /// is not.
    pub fn parse(text: &str) -> Result<usize, &'static str> {
        text.trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_SHARDS).contains(n))
            .ok_or("not a whole number from 1 to 8")
    }
}
