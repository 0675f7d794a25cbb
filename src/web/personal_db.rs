//! A person's own digits (the lab's "teach it your handwriting") in the browser's database,
//! beside the runs: IndexedDB `vitlab-personal`, a database of its own so that the runs'
//! database never has to be upgraded under a tab that holds it open. Each digit is a record
//! of its own (`crate::handwriting_store`: its label, its revision and its pixels, under a
//! random id), so that every change is one transaction on one digit and two tabs never write
//! over each other's.
//!
//! Version 1 kept the whole set as two values (its images and its labels) in the store `set`:
//! the first open of version 2 moves them into digits, in one transaction (a second tab, or a
//! second load after a crash, finds nothing left to move). What the database holds is read as
//! hostile: a record that is not a digit is counted and left as it is, and an old set that is
//! not a set is named and left where it is.

use std::rc::Rc;

use idb::{Database, DatabaseEvent, ObjectStoreParams, TransactionMode};
use js_sys::Uint8Array;
use wasm_bindgen::{JsCast, JsValue};

use super::databases::{DatabaseNotice, DbFailure, finish, open_database};
use crate::data::{IMAGE_PIXELS, MAX_PERSONAL_DIGITS, PersonalSet};
use crate::handwriting_store::{
    DIGIT_BYTES, DigitId, DigitStore, DigitStoreError, KeptDigit, digit_id,
};

const NAME: &str = "vitlab-personal";
const VERSION: u32 = 2;
/// Version 1's whole set: two values, `images` and `labels`.
const OLD_SET: &str = "set";
const IMAGES: &str = "images";
const LABELS: &str = "labels";
/// A digit a record, by its id.
const DIGITS: &str = "digits";
/// Records read at most: a full set, and as many again that are not digits.
const MAX_RECORDS: usize = 2 * MAX_PERSONAL_DIGITS;

impl From<DbFailure> for DigitStoreError {
    fn from(failure: DbFailure) -> Self {
        match failure {
            DbFailure::Full => Self::Full,
            DbFailure::Failed(why) => Self::Failed(why),
        }
    }
}

fn failed(error: impl std::fmt::Display) -> DigitStoreError {
    DbFailure::of(error).into()
}

fn read_failed(error: impl std::fmt::Display) -> DigitStoreError {
    DigitStoreError::Read(error.to_string())
}

fn key(id: DigitId) -> JsValue {
    JsValue::from_f64(id as f64)
}

/// Why version 1's set was not moved into digits: named, and left where it is.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the digits kept in this browser could not be read ({0}); they are left as they were")]
pub struct OldSetUnreadable(pub &'static str);

/// The personal set's database; clones share one connection.
#[derive(Clone)]
pub struct PersonalDb {
    db: std::rc::Rc<Database>,
}

impl PersonalDb {
    /// The database, made or upgraded at its first use; `said` hears what another tab's page
    /// asks of it.
    pub async fn open(said: Rc<dyn Fn(DatabaseNotice)>) -> Result<Self, DigitStoreError> {
        let upgrade = |event: idb::event::VersionChangeEvent| {
            let Ok(db) = event.database() else { return };
            if !db.store_names().iter().any(|name| name == DIGITS) {
                let _ = db.create_object_store(DIGITS, ObjectStoreParams::new());
            }
        };
        let db = open_database(NAME, VERSION, upgrade, said)
            .await
            .ok_or(DigitStoreError::NoStorage)?;
        Ok(Self {
            db: std::rc::Rc::new(db),
        })
    }

    /// Moves version 1's set into digits, in one transaction, then empties it; how many
    /// digits came. Nothing to move is `Ok(0)`: a second tab, or a second load, finds it
    /// emptied. A set that is not one is named and left where it is.
    pub async fn move_old_set(
        &self,
        now_ms: u64,
    ) -> Result<Result<usize, OldSetUnreadable>, DigitStoreError> {
        if !self.db.store_names().iter().any(|name| name == OLD_SET) {
            return Ok(Ok(0));
        }
        let transaction = self
            .db
            .transaction(&[OLD_SET, DIGITS], TransactionMode::ReadWrite)
            .map_err(failed)?;
        let done = async {
            let old = transaction.object_store(OLD_SET).map_err(read_failed)?;
            let images = old
                .get(JsValue::from_str(IMAGES))
                .map_err(read_failed)?
                .await;
            let labels = old
                .get(JsValue::from_str(LABELS))
                .map_err(read_failed)?
                .await;
            let set = match (images.map_err(read_failed)?, labels.map_err(read_failed)?) {
                (None, None) => return Ok(Ok(0)),
                (Some(images), Some(labels)) => match set_of(images, labels) {
                    Ok(set) => set,
                    Err(why) => return Ok(Err(why)),
                },
                _ => return Ok(Err(OldSetUnreadable("images without labels"))),
            };
            let digits = transaction.object_store(DIGITS).map_err(failed)?;
            for (i, (image, &label)) in set.images.iter().zip(&set.labels).enumerate() {
                // Their order kept: a millisecond for each 1,024 of them.
                let i = i as u64;
                let digit = KeptDigit::new(digit_id(now_ms + (i >> 10), i), *image, label);
                let bytes = Uint8Array::from(digit.to_bytes().as_slice());
                digits
                    .put(&bytes, Some(&key(digit.id)))
                    .map_err(failed)?
                    .await
                    .map_err(failed)?;
            }
            for name in [IMAGES, LABELS] {
                old.delete(JsValue::from_str(name))
                    .map_err(failed)?
                    .await
                    .map_err(failed)?;
            }
            Ok(Ok(set.len()))
        }
        .await;
        finish(transaction, DIGITS, done).await
    }
}

impl DigitStore for PersonalDb {
    async fn all(&self) -> Result<(Vec<KeptDigit>, usize), DigitStoreError> {
        let transaction = self
            .db
            .transaction(&[DIGITS], TransactionMode::ReadOnly)
            .map_err(read_failed)?;
        let store = transaction.object_store(DIGITS).map_err(read_failed)?;
        let limit = u32::try_from(MAX_RECORDS).unwrap_or(u32::MAX);
        let keys = store
            .get_all_keys(None, Some(limit))
            .map_err(read_failed)?
            .await
            .map_err(read_failed)?;
        let values = store
            .get_all(None, Some(limit))
            .map_err(read_failed)?
            .await
            .map_err(read_failed)?;
        let mut digits = Vec::new();
        let mut unreadable = 0;
        for (key, value) in keys.into_iter().zip(values) {
            match digit_of(key, value) {
                Some(digit) if digits.len() < MAX_PERSONAL_DIGITS => digits.push(digit),
                _ => unreadable += 1,
            }
        }
        Ok((digits, unreadable))
    }

    async fn add(&self, new: &[KeptDigit]) -> Result<(), DigitStoreError> {
        let transaction = self
            .db
            .transaction(&[DIGITS], TransactionMode::ReadWrite)
            .map_err(failed)?;
        let done = async {
            let store = transaction.object_store(DIGITS).map_err(failed)?;
            // Counted in the transaction that adds: another tab's digits count too.
            let held = store.count(None).map_err(failed)?.await.map_err(failed)? as usize;
            if held.saturating_add(new.len()) > MAX_PERSONAL_DIGITS {
                return Err(DigitStoreError::TooMany);
            }
            // Added, never put: an id another tab drew in the same millisecond fails the
            // whole change instead of writing over that tab's digit.
            for digit in new {
                let bytes = Uint8Array::from(digit.to_bytes().as_slice());
                store
                    .add(&bytes, Some(&key(digit.id)))
                    .map_err(failed)?
                    .await
                    .map_err(failed)?;
            }
            Ok(())
        }
        .await;
        finish(transaction, DIGITS, done).await
    }

    async fn relabel(&self, id: DigitId, base: u32, label: u8) -> Result<u32, DigitStoreError> {
        let transaction = self
            .db
            .transaction(&[DIGITS], TransactionMode::ReadWrite)
            .map_err(failed)?;
        let done = async {
            let store = transaction.object_store(DIGITS).map_err(failed)?;
            let value = store.get(key(id)).map_err(failed)?.await.map_err(failed)?;
            let Some(mut digit) = value.and_then(|value| digit_of(key(id), value)) else {
                return Err(DigitStoreError::Gone(id));
            };
            if digit.revision != base {
                return Err(DigitStoreError::Moved(id));
            }
            digit.label = label.min(9);
            digit.revision = base.saturating_add(1);
            let bytes = Uint8Array::from(digit.to_bytes().as_slice());
            store
                .put(&bytes, Some(&key(id)))
                .map_err(failed)?
                .await
                .map_err(failed)?;
            Ok(digit.revision)
        }
        .await;
        finish(transaction, DIGITS, done).await
    }

    async fn delete(&self, id: DigitId) -> Result<(), DigitStoreError> {
        self.write(|store| store.delete(key(id)).map(drop)).await
    }

    async fn delete_all(&self) -> Result<(), DigitStoreError> {
        self.write(|store| store.clear().map(drop)).await
    }
}

impl PersonalDb {
    /// One request on the digits, in a transaction of its own.
    async fn write(
        &self,
        request: impl FnOnce(&idb::ObjectStore) -> Result<(), idb::Error>,
    ) -> Result<(), DigitStoreError> {
        let transaction = self
            .db
            .transaction(&[DIGITS], TransactionMode::ReadWrite)
            .map_err(failed)?;
        let done = transaction
            .object_store(DIGITS)
            .map_err(failed)
            .and_then(|store| request(&store).map_err(failed));
        finish(transaction, DIGITS, done).await
    }
}

/// A record as a digit, measured before it is copied; none where it is not one.
fn digit_of(key: JsValue, value: JsValue) -> Option<KeptDigit> {
    let id = key.as_f64().filter(|id| id.fract() == 0.0 && *id >= 0.0)? as DigitId;
    let bytes = value.dyn_into::<Uint8Array>().ok()?;
    if bytes.length() as usize != DIGIT_BYTES {
        return None;
    }
    KeptDigit::from_bytes(id, &bytes.to_vec()).ok()
}

/// Version 1's two values as a set, measured before they are copied.
fn set_of(images: JsValue, labels: JsValue) -> Result<PersonalSet, OldSetUnreadable> {
    let (Ok(images), Ok(labels)) = (
        images.dyn_into::<Uint8Array>(),
        labels.dyn_into::<Uint8Array>(),
    ) else {
        return Err(OldSetUnreadable("not bytes"));
    };
    let count = labels.length() as usize;
    if count > MAX_PERSONAL_DIGITS {
        return Err(OldSetUnreadable("more digits than a set holds"));
    }
    // At most MAX_PERSONAL_DIGITS: no overflow, even on 32 bits.
    if images.length() as usize != count * IMAGE_PIXELS {
        return Err(OldSetUnreadable("images and labels that differ in number"));
    }
    let labels = labels.to_vec();
    if labels.iter().any(|&label| label > 9) {
        return Err(OldSetUnreadable("a label outside 0 to 9"));
    }
    let images = images.to_vec();
    Ok(PersonalSet {
        images: images
            .chunks_exact(IMAGE_PIXELS)
            .map(|image| image.try_into().expect("IMAGE_PIXELS bytes"))
            .collect(),
        labels,
    })
}
