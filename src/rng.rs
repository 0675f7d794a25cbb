//! Randomness every part shares: one small generator, the same on every platform.

/// A small, fast, seedable generator (Steele et al., SplitMix64): the same stream on every
/// platform, so a seed means the same shuffles natively and in the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The augmentation stream of a run seeded with `seed`, apart from its shuffling stream
    /// (which starts at `seed` itself); the page and `vit train` both start from it.
    pub fn for_augmentation(seed: u64) -> Self {
        Self(seed ^ 0xa5a5_a5a5)
    }

    /// The whole state, to save with a checkpoint; [`SplitMix64::new`] restores it.
    pub fn state(&self) -> u64 {
        self.0
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in `0..bound`.
    pub fn below(&mut self, bound: usize) -> usize {
        ((self.next_u64() as u128 * bound as u128) >> 64) as usize
    }

    /// Fisher–Yates.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// A well-mixed 64-bit value from two: independent streams from one seed.
pub fn mix(a: u64, b: u64) -> u64 {
    SplitMix64::new(a.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ b).next_u64()
}

/// The seed of training step `step` of a run seeded with `seed`: step n's dropout draws
/// from (seed, n) alone, so a resumed run draws the masks of one never interrupted.
pub fn step_seed(seed: u64, step: usize) -> u64 {
    mix(seed, step as u64)
}
