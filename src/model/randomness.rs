//! Burn's random draws (initialisation, device-side dropout) come from one generator per
//! process, not per thread: a run that seeds it and then initialises a model gets the draws it
//! seeded for only if no other thread seeds or draws in between. Natively, tests run side by
//! side and two sessions of one test seeded alike once initialised differently (CI, stop 42).
//! [`seeded`] holds a process-wide turn for the seed and the draws that depend on it, and every
//! model initialisation takes the same turn, so none lands in the middle of another's.

use std::cell::Cell;
use std::sync::Mutex;

use burn::tensor::Device;

use super::dropout::seed_masks;
use super::thread_setting::while_set;

/// The turn at Burn's generator.
static GENERATOR: Mutex<()> = Mutex::new(());

thread_local! {
    /// Whether this thread holds the turn already (a seeded initialisation calls `init`, which
    /// takes the turn too; a `Mutex` taken twice by one thread would wait on itself).
    static HOLDS_TURN: Cell<bool> = const { Cell::new(false) };
}

/// `work`, run while no other thread draws from Burn's generator.
pub fn exclusive<T>(work: impl FnOnce() -> T) -> T {
    if HOLDS_TURN.get() {
        return work();
    }
    // A test that panicked while holding the turn left nothing half-done in `()`.
    let _turn = GENERATOR
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    while_set(&HOLDS_TURN, true, work)
}

/// Seeds every random draw of a run: Burn's (initialisation, device-side dropout), in its
/// turn, and this thread's CPU dropout masks.
pub fn seed_randomness(device: &Device, seed: u64) {
    exclusive(|| device.seed(seed));
    seed_masks(seed);
}

/// `work`, with every random draw of a run seeded from `seed` (as [`seed_randomness`]) and
/// none of Burn's draws shared with another thread until it ends.
pub fn seeded<T>(device: &Device, seed: u64, work: impl FnOnce() -> T) -> T {
    exclusive(|| {
        seed_randomness(device, seed);
        work()
    })
}
