//! A thread's own setting (a `thread_local!` cell), set for one piece of work and put back
//! after it, even if the work panics.
//!
//! For work that may run on a thread in the middle of other work: a rayon thread waiting for a
//! job it handed out runs others meanwhile (a step's other half, another run's), each to its
//! end, so each one restoring what it found keeps every interrupted one's setting its own.

use std::cell::Cell;
use std::thread::LocalKey;

/// Runs `work` with `setting` holding `value` on this thread, then puts back what it held.
pub(crate) fn while_set<T: Copy + 'static, R>(
    setting: &'static LocalKey<Cell<T>>,
    value: T,
    work: impl FnOnce() -> R,
) -> R {
    struct Restore<T: Copy + 'static> {
        setting: &'static LocalKey<Cell<T>>,
        previous: T,
    }
    impl<T: Copy + 'static> Drop for Restore<T> {
        fn drop(&mut self) {
            self.setting.set(self.previous);
        }
    }
    let _restore = Restore {
        setting,
        previous: setting.replace(value),
    };
    work()
}
