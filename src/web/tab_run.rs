//! The run this tab trains, remembered across its reloads in `sessionStorage`, which is the
//! tab's own: a second tab trains a run of its own, and a reload offers this tab's run, never
//! the other tab's. Where the storage is refused (a sandboxed frame), the tab remembers no
//! run; the runs table still continues any. And the ids new runs are given.

use crate::run_store::{MAX_RUN_ID, RunId, TabMemory};

const KEY: &str = "vitlab-run";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok().flatten()
}

/// The tab's `sessionStorage`, as `run_store` remembers the tab's run in it.
#[derive(Clone, Copy, Default)]
pub struct SessionTab;

impl TabMemory for SessionTab {
    fn run(&self) -> Option<RunId> {
        storage()?.get_item(KEY).ok().flatten()?.parse().ok()
    }

    fn set_run(&self, id: RunId) {
        if let Some(storage) = storage() {
            let _ = storage.set_item(KEY, &id.to_string());
        }
    }

    fn forget_run(&self) {
        if let Some(storage) = storage() {
            let _ = storage.remove_item(KEY);
        }
    }
}

/// A fresh run id from the browser's `crypto.getRandomValues` (through `getrandom`), in
/// 1..2^53: no two tabs can be given one id by starting together, as they were when ids were
/// start times. Falls back to the time where the browser refuses randomness.
pub fn draw_run_id() -> RunId {
    let mut bytes = [0; 8];
    let drawn = match getrandom::fill(&mut bytes) {
        Ok(()) => u64::from_le_bytes(bytes),
        Err(_) => js_sys::Date::now() as u64 ^ (crate::web::now_ms() * 1000.0) as u64,
    };
    (drawn & MAX_RUN_ID).max(1)
}
