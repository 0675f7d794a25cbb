//! How the page keeps a person's own digits, a digit a record: the rules over a small
//! [`DigitStore`] (the browser's database in the page, `web::personal_db`; [`memory`] in the
//! tests), and [`SetKeeper`], a tab's copy of the set and the one way it changes it. Pure: the
//! tests drive two tabs through every interleaving of keeping, relabelling, deleting, deleting
//! all and reading again (tests/native/handwriting_store.rs).
//!
//! The rules:
//! - each digit is its own record under an id drawn at random (time first, so that the ids
//!   sort in the order the digits were kept); keeping, relabelling and deleting are each one
//!   transaction on that digit, so two tabs never write over each other's digits;
//! - a relabelling names the revision it continues from, and one whose base is not the stored
//!   revision (the digit relabelled in another tab meanwhile) or whose digit is gone is
//!   refused: the tab reads the set again;
//! - "Delete all" deletes what is stored, not only what the tab has;
//! - a tab reads the set again whenever another tab changes it (`ui::state::Handwriting`
//!   hears it through a `BroadcastChannel`, and when the tab is shown again).

pub mod memory;

use crate::data::{IMAGE_PIXELS, MAX_PERSONAL_DIGITS, PersonalSet};

/// A digit's name in the store.
pub type DigitId = u64;

/// Ids are below 2^53, so that JavaScript (the database's keys) holds them exactly.
pub const MAX_DIGIT_ID: DigitId = (1 << 53) - 1;

/// Bytes of a kept digit: its label, its revision (`u32`, little-endian), its 784 grey levels.
pub const DIGIT_BYTES: usize = 1 + 4 + IMAGE_PIXELS;

/// One digit as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptDigit {
    pub id: DigitId,
    pub label: u8,
    /// Bumped at each relabelling.
    pub revision: u32,
    pub image: [u8; IMAGE_PIXELS],
}

/// Why a kept digit's bytes are not a digit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DigitBytesError {
    #[error("{0} bytes where a digit takes {DIGIT_BYTES}")]
    Length(usize),
    #[error("a label of {0}, outside 0 to 9")]
    Label(u8),
}

impl KeptDigit {
    /// Its bytes in the store.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(DIGIT_BYTES);
        bytes.push(self.label);
        bytes.extend_from_slice(&self.revision.to_le_bytes());
        bytes.extend_from_slice(&self.image);
        bytes
    }

    /// Reads a digit's bytes, checked before anything is built of them.
    pub fn from_bytes(id: DigitId, bytes: &[u8]) -> Result<Self, DigitBytesError> {
        if bytes.len() != DIGIT_BYTES {
            return Err(DigitBytesError::Length(bytes.len()));
        }
        let label = bytes[0];
        if label > 9 {
            return Err(DigitBytesError::Label(label));
        }
        let revision = u32::from_le_bytes(bytes[1..5].try_into().expect("4 bytes"));
        let image = bytes[5..].try_into().expect("IMAGE_PIXELS bytes");
        Ok(Self {
            id,
            label,
            revision,
            image,
        })
    }

    /// A digit new to the store, under `id`.
    pub fn new(id: DigitId, image: [u8; IMAGE_PIXELS], label: u8) -> Self {
        Self {
            id,
            label: label.min(9),
            revision: 1,
            image,
        }
    }
}

/// An id for a digit kept at `now_ms` (milliseconds since 1970), with `random` bits beside it
/// so that two tabs keeping a digit in one millisecond draw two ids: sorted, the ids are the
/// order the digits were kept in.
pub fn digit_id(now_ms: u64, random: u64) -> DigitId {
    ((now_ms << 10) | (random & 0x3ff)) & MAX_DIGIT_ID
}

/// Why the store did not do what it was asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DigitStoreError {
    #[error("this browser gives the page no database: your digits are kept until the page closes")]
    NoStorage,
    #[error("the browser's storage for this page is full: the change was not saved")]
    Full,
    #[error("your set holds {MAX_PERSONAL_DIGITS} digits, as many as it can")]
    TooMany,
    #[error("that digit was deleted in another tab")]
    Gone(DigitId),
    #[error("that digit was relabelled in another tab: it is shown as it is now")]
    Moved(DigitId),
    #[error("saving your digits failed: {0}")]
    Failed(String),
    #[error("reading your digits failed: {0}")]
    Read(String),
}

/// The digits, a record each. Each call is one transaction.
#[allow(async_fn_in_trait)]
pub trait DigitStore {
    /// Every digit that reads as one, by id, and how many records did not (left as they
    /// are, never written over).
    async fn all(&self) -> Result<(Vec<KeptDigit>, usize), DigitStoreError>;
    /// Keeps `digits`, all or none; refused with [`DigitStoreError::TooMany`] where the store
    /// would hold more than [`MAX_PERSONAL_DIGITS`], and where an id is taken (never written
    /// over).
    async fn add(&self, digits: &[KeptDigit]) -> Result<(), DigitStoreError>;
    /// Digit `id` is `label`, as the revision after `base` (returned); refused where it is
    /// gone or its stored revision is not `base`.
    async fn relabel(&self, id: DigitId, base: u32, label: u8) -> Result<u32, DigitStoreError>;
    /// Digit `id` goes (nothing to do where it went already).
    async fn delete(&self, id: DigitId) -> Result<(), DigitStoreError>;
    /// Every digit stored goes.
    async fn delete_all(&self) -> Result<(), DigitStoreError>;
}

/// A tab's copy of the set, and the one way it changes it: each change is made in the store
/// first (one transaction) and then in the copy; where the store refuses, the copy is read
/// again. Clones share the copy.
#[derive(Clone)]
pub struct SetKeeper<S> {
    store: S,
    digits: std::rc::Rc<std::cell::RefCell<Vec<KeptDigit>>>,
}

impl<S: DigitStore> SetKeeper<S> {
    pub fn new(store: S) -> Self {
        Self {
            store,
            digits: Default::default(),
        }
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    /// The tab's copy, as a set the lab trains on and saves.
    pub fn set(&self) -> PersonalSet {
        let digits = self.digits.borrow();
        PersonalSet {
            images: digits.iter().map(|d| d.image).collect(),
            labels: digits.iter().map(|d| d.label).collect(),
        }
    }

    /// The ids of the copy's digits, in its order.
    pub fn ids(&self) -> Vec<DigitId> {
        self.digits.borrow().iter().map(|d| d.id).collect()
    }

    pub fn len(&self) -> usize {
        self.digits.borrow().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads the set as stored; how many records did not read as digits.
    pub async fn read(&self) -> Result<usize, DigitStoreError> {
        let (digits, unreadable) = self.store.all().await?;
        *self.digits.borrow_mut() = digits;
        Ok(unreadable)
    }

    /// `digits` (new ones, each under its own fresh id) join the set.
    pub async fn add(&self, digits: Vec<KeptDigit>) -> Result<(), DigitStoreError> {
        if self.len().saturating_add(digits.len()) > MAX_PERSONAL_DIGITS {
            return Err(DigitStoreError::TooMany);
        }
        self.store.add(&digits).await?;
        let mut kept = self.digits.borrow_mut();
        kept.extend(digits);
        kept.sort_by_key(|d| d.id);
        Ok(())
    }

    /// The copy's digit `id`, if it has it.
    pub fn digit(&self, id: DigitId) -> Option<KeptDigit> {
        self.digits.borrow().iter().find(|d| d.id == id).cloned()
    }

    /// Digit `id` is `label` (nothing to do where the copy no longer has it).
    pub async fn relabel(&self, id: DigitId, label: u8) -> Result<(), DigitStoreError> {
        let Some(base) = self.digit(id).map(|d| d.revision) else {
            return Ok(());
        };
        match self.store.relabel(id, base, label.min(9)).await {
            Ok(revision) => {
                if let Some(digit) = self.digits.borrow_mut().iter_mut().find(|d| d.id == id) {
                    digit.label = label.min(9);
                    digit.revision = revision;
                }
                Ok(())
            }
            Err(error) => {
                // Another tab changed it: the copy is read again, and the person told.
                let _ = self.read().await;
                Err(error)
            }
        }
    }

    /// Digit `id` goes: the digit deleted, to be kept again by an Undo, or `None` where the
    /// copy no longer had it (a second press of the same button deletes nothing more).
    pub async fn delete(&self, id: DigitId) -> Result<Option<KeptDigit>, DigitStoreError> {
        let Some(digit) = self.digit(id) else {
            return Ok(None);
        };
        self.store.delete(id).await?;
        self.digits.borrow_mut().retain(|d| d.id != id);
        Ok(Some(digit))
    }

    /// Every digit stored goes, the other tabs' too.
    pub async fn delete_all(&self) -> Result<(), DigitStoreError> {
        self.store.delete_all().await?;
        self.digits.borrow_mut().clear();
        Ok(())
    }
}
