//! A person's own digits (the lab's "teach it your handwriting") in the browser's database,
//! beside the runs: IndexedDB `vitlab-personal`, a database of its own so that the runs'
//! database never has to be upgraded under a tab that holds it open. The set is two values,
//! its images and its labels, written together in one transaction.
//!
//! What the database holds is read as hostile: values of the wrong type, more digits than a
//! set holds, images and labels that do not match, or a label outside 0–9 are refused with a
//! reason, and the page starts from an empty set without writing over them.

use idb::{
    Database, DatabaseEvent, Factory, ObjectStoreParams, TransactionMode, TransactionResult,
};
use js_sys::Uint8Array;
use wasm_bindgen::{JsCast, JsValue};

use crate::data::{IMAGE_PIXELS, MAX_PERSONAL_DIGITS, PersonalSet};

const NAME: &str = "vitlab-personal";
const VERSION: u32 = 1;
const STORE: &str = "set";
const IMAGES: &str = "images";
const LABELS: &str = "labels";

/// Why the set was not read or kept.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PersonalStoreError {
    #[error("this browser gives the page no database: your digits are kept until the page closes")]
    NoStorage,
    #[error("the browser's storage for this page is full: the change was not saved")]
    Full,
    #[error("saving your digits failed: {0}")]
    Failed(String),
    #[error("reading your digits failed: {0}")]
    Read(String),
    #[error("the digits kept in this browser could not be read ({0}); they are left as they were")]
    Unreadable(&'static str),
}

fn failed(error: impl std::fmt::Display) -> PersonalStoreError {
    let text = error.to_string();
    if text.contains("QuotaExceeded") {
        PersonalStoreError::Full
    } else {
        PersonalStoreError::Failed(text)
    }
}

/// The personal set's database; clones share one connection.
#[derive(Clone)]
pub struct PersonalDb {
    db: std::rc::Rc<Database>,
}

impl PersonalDb {
    /// The database, made at its first use.
    pub async fn open() -> Result<Self, PersonalStoreError> {
        let factory = Factory::new().map_err(|_| PersonalStoreError::NoStorage)?;
        let mut request = factory
            .open(NAME, Some(VERSION))
            .map_err(|_| PersonalStoreError::NoStorage)?;
        request.on_upgrade_needed(|event| {
            let Ok(db) = event.database() else { return };
            if !db.store_names().iter().any(|name| name == STORE) {
                let _ = db.create_object_store(STORE, ObjectStoreParams::new());
            }
        });
        let db = request.await.map_err(|_| PersonalStoreError::NoStorage)?;
        Ok(Self {
            db: std::rc::Rc::new(db),
        })
    }

    /// The set kept, empty where none is; refused where what is kept is not a set.
    pub async fn load(&self) -> Result<PersonalSet, PersonalStoreError> {
        let read = |error: idb::Error| PersonalStoreError::Read(error.to_string());
        let transaction = self
            .db
            .transaction(&[STORE], TransactionMode::ReadOnly)
            .map_err(read)?;
        let store = transaction.object_store(STORE).map_err(read)?;
        let images = store.get(JsValue::from_str(IMAGES)).map_err(read)?.await;
        let labels = store.get(JsValue::from_str(LABELS)).map_err(read)?.await;
        match (images.map_err(read)?, labels.map_err(read)?) {
            (None, None) => Ok(PersonalSet::default()),
            (Some(images), Some(labels)) => set_of(images, labels),
            _ => Err(PersonalStoreError::Unreadable("images without labels")),
        }
    }

    /// Keeps `set` in place of the one kept, in one transaction.
    pub async fn save(&self, set: &PersonalSet) -> Result<(), PersonalStoreError> {
        let transaction = self
            .db
            .transaction(&[STORE], TransactionMode::ReadWrite)
            .map_err(failed)?;
        let done = async {
            let store = transaction.object_store(STORE).map_err(failed)?;
            let images = Uint8Array::from(set.images.concat().as_slice());
            store
                .put(&images, Some(&JsValue::from_str(IMAGES)))
                .map_err(failed)?
                .await
                .map_err(failed)?;
            let labels = Uint8Array::from(set.labels.as_slice());
            store
                .put(&labels, Some(&JsValue::from_str(LABELS)))
                .map_err(failed)?
                .await
                .map_err(failed)?;
            Ok(())
        }
        .await;
        if let Err(error) = done {
            let _ = transaction.abort();
            return Err(error);
        }
        // Asked after an abort why the browser undid it (a full quota, most often).
        let probe = transaction.object_store(STORE).map_err(failed)?;
        match transaction.commit().map_err(failed)?.await {
            Ok(TransactionResult::Committed) => Ok(()),
            Ok(TransactionResult::Aborted) | Err(_) => Err(match probe.transaction().error() {
                Some(error) if error.name() == "QuotaExceededError" => PersonalStoreError::Full,
                Some(error) => {
                    PersonalStoreError::Failed(format!("{}: {}", error.name(), error.message()))
                }
                None => PersonalStoreError::Failed("the browser undid the save".into()),
            }),
        }
    }
}

/// The kept values as a set, measured before they are copied.
fn set_of(images: JsValue, labels: JsValue) -> Result<PersonalSet, PersonalStoreError> {
    let (Ok(images), Ok(labels)) = (
        images.dyn_into::<Uint8Array>(),
        labels.dyn_into::<Uint8Array>(),
    ) else {
        return Err(PersonalStoreError::Unreadable("not bytes"));
    };
    let count = labels.length() as usize;
    if count > MAX_PERSONAL_DIGITS {
        return Err(PersonalStoreError::Unreadable(
            "more digits than a set holds",
        ));
    }
    // At most MAX_PERSONAL_DIGITS: no overflow, even on 32 bits.
    if images.length() as usize != count * IMAGE_PIXELS {
        return Err(PersonalStoreError::Unreadable(
            "images and labels that differ in number",
        ));
    }
    let labels = labels.to_vec();
    if labels.iter().any(|&label| label > 9) {
        return Err(PersonalStoreError::Unreadable("a label outside 0 to 9"));
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
