//! The page's two IndexedDB databases (the runs', the person's digits') opened alike, their
//! transactions ended alike ([`finish`]), their failures read alike ([`DbFailure`]), and what
//! each says when another tab stands in the way of a new version: a tab whose page is older
//! holds the database open while this one asks for a newer version (`blocked`: said, and the
//! open goes on once that tab closes it), or a newer page in another tab asks this one to let
//! go (`versionchange`: this tab closes its connection at once, so the other is never held
//! up, and asks to be reloaded).

use std::rc::Rc;

use idb::event::VersionChangeEvent;
use idb::{Database, Factory, Transaction, TransactionResult};
use wasm_bindgen::JsCast;

/// Why the browser's database did not do what was asked: its storage is full, or anything else,
/// in its words. Each database's own error is made from it (`From`).
#[derive(Debug, Clone, PartialEq)]
pub enum DbFailure {
    Full,
    Failed(String),
}

impl DbFailure {
    /// An error of the `idb` crate or the browser, read.
    pub fn of(error: impl std::fmt::Display) -> Self {
        let text = error.to_string();
        if text.contains("QuotaExceeded") {
            Self::Full
        } else {
            Self::Failed(text)
        }
    }
}

/// Ends `transaction` as `done` says: committed after a body that went through, aborted after
/// one that did not, so that nothing of it lands (a transaction merely dropped would commit
/// whatever it wrote before the failure). A commit the browser undid says why, read off the
/// transaction through `store`, one of its stores: a full quota, most often.
pub async fn finish<T, E: From<DbFailure>>(
    transaction: Transaction,
    store: &str,
    done: Result<T, E>,
) -> Result<T, E> {
    let done = match done {
        Ok(done) => done,
        Err(error) => {
            let _ = transaction.abort();
            return Err(error);
        }
    };
    let probe = transaction.object_store(store).map_err(DbFailure::of)?;
    let committed = transaction.commit().map_err(DbFailure::of)?.await;
    let why = match committed {
        Ok(TransactionResult::Committed) => return Ok(done),
        Ok(TransactionResult::Aborted) | Err(_) => match probe.transaction().error() {
            Some(error) if error.name() == "QuotaExceededError" => DbFailure::Full,
            Some(error) => DbFailure::Failed(format!("{}: {}", error.name(), error.message())),
            None => committed.err().map_or_else(
                || DbFailure::Failed("the browser undid the change".into()),
                DbFailure::of,
            ),
        },
    };
    Err(why.into())
}

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
