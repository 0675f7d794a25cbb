//! The run this tab trains, remembered across its reloads in `sessionStorage`, which is the
//! tab's own: a second tab trains a run of its own, and a reload offers this tab's run, never
//! the other tab's. Where the storage is refused (a sandboxed frame), the tab remembers no
//! run; the runs table still continues any.

const KEY: &str = "vitlab-run";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok().flatten()
}

/// The run this tab last kept a checkpoint of, unless it let it go.
pub fn tab_run() -> Option<u64> {
    storage()?.get_item(KEY).ok().flatten()?.parse().ok()
}

pub fn set_tab_run(run: u64) {
    if let Some(storage) = storage() {
        let _ = storage.set_item(KEY, &run.to_string());
    }
}

pub fn forget_tab_run() {
    if let Some(storage) = storage() {
        let _ = storage.remove_item(KEY);
    }
}

/// An id for a new run: the time it starts, in milliseconds since 1970, past this tab's run
/// (two starts within a millisecond). Two tabs starting in the same millisecond are left to
/// chance.
pub fn new_run_id() -> u64 {
    let now = js_sys::Date::now() as u64;
    now.max(tab_run().map_or(0, |run| run.saturating_add(1)))
}
