//! Opening the page's two IndexedDB databases (the runs', the person's digits') alike, and what
//! each says when another tab stands in the way of a new version: a tab whose page is older
//! holds the database open while this one asks for a newer version (`blocked`: said, and the
//! open goes on once that tab closes it), or a newer page in another tab asks this one to let
//! go (`versionchange`: this tab closes its connection at once, so the other is never held
//! up, and asks to be reloaded).

use std::rc::Rc;

use idb::event::VersionChangeEvent;
use idb::{Database, Factory};
use wasm_bindgen::JsCast;

/// What a database's opening has to say to the person, beyond success or failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DatabaseNotice {
    #[error(
        "another tab of this page, opened before it was updated, holds its database: close that tab, and this one goes on"
    )]
    Blocked,
    #[error(
        "this page was updated in another tab, which needs its database: reload this tab to go on keeping your work here"
    )]
    Closed,
}

/// Opens `name` at `version`, with `upgrade` making its stores where the version is new, and
/// `said` hearing a [`DatabaseNotice`]. `None` where the browser gives the page no database.
pub async fn open_database(
    name: &str,
    version: u32,
    upgrade: impl FnOnce(VersionChangeEvent) + 'static,
    said: Rc<dyn Fn(DatabaseNotice)>,
) -> Option<Database> {
    let factory = Factory::new().ok()?;
    let mut request = factory.open(name, Some(version)).ok()?;
    request.on_upgrade_needed(upgrade);
    let blocked = said.clone();
    request.on_blocked(move |_| blocked(DatabaseNotice::Blocked));
    let mut db = request.await.ok()?;
    db.on_version_change(move |event| {
        if let Some(db) = event
            .target()
            .and_then(|target| target.dyn_into::<web_sys::IdbDatabase>().ok())
        {
            db.close();
        }
        said(DatabaseNotice::Closed);
    });
    Some(db)
}
