//! A person's own digits, as the page holds them: the set in memory, read once from the
//! browser's database ([`PersonalDb`]) before the first change, and written back whole after
//! each change, in the order the changes were made. Where the database holds something that
//! is not a set, the page says so and never writes over it: changes are kept until the page
//! closes.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::data::{IMAGE_PIXELS, MAX_PERSONAL_DIGITS, PersonalSet, PersonalSetError};
use crate::web::personal_db::PersonalDb;

/// Where the set kept in the browser stands.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kept {
    /// Not read yet.
    Unread,
    /// Read; changes are written back.
    Writing,
    /// No database, or one that holds what is not a set: changes stay in memory.
    InMemory,
}

/// A change to the set, refused with a reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChangeError {
    #[error("your set holds {MAX_PERSONAL_DIGITS} digits, as many as it can")]
    Full,
    #[error("the imported files are not a set: {0}")]
    Import(#[from] PersonalSetError),
    #[error("the import would make {0} digits, more than the {MAX_PERSONAL_DIGITS} a set holds")]
    ImportTooLarge(usize),
}

/// The person's set, shared by the lab's cards through context.
#[derive(Clone, Copy)]
pub struct Handwriting {
    /// The set now.
    pub set: RwSignal<Arc<PersonalSet>>,
    /// What went wrong last, to show beside the set; none once a change is kept.
    pub problem: RwSignal<Option<String>>,
    /// Whether the set kept in the browser has been read.
    pub loaded: RwSignal<bool>,
    kept: StoredValue<Kept>,
    db: StoredValue<Option<PersonalDb>, LocalStorage>,
}

impl Default for Handwriting {
    fn default() -> Self {
        Self::new()
    }
}

impl Handwriting {
    pub fn new() -> Self {
        Self {
            set: RwSignal::new(Arc::new(PersonalSet::default())),
            problem: RwSignal::new(None),
            loaded: RwSignal::new(false),
            kept: StoredValue::new(Kept::Unread),
            db: StoredValue::new_local(None),
        }
    }

    /// Reads the set kept in the browser, once; a call while it is read waits for it.
    pub async fn load(self) {
        if self.kept.get_value() != Kept::Unread {
            while !self.loaded.get_untracked() {
                crate::web::sleep_ms(20).await;
            }
            return;
        }
        // Marked at once: a second caller meanwhile does not read it again.
        self.kept.set_value(Kept::InMemory);
        let opened = match PersonalDb::open().await {
            Ok(db) => db.load().await.map(|set| (db, set)),
            Err(error) => Err(error),
        };
        match opened {
            Ok((db, set)) => {
                self.db.set_value(Some(db));
                self.kept.set_value(Kept::Writing);
                // Digits added while it was read come after the kept ones.
                let added = self.set.get_untracked();
                let mut kept = set;
                kept.images.extend(added.images.iter().copied());
                kept.labels.extend(added.labels.iter().copied());
                self.set.set(Arc::new(kept));
                if !added.is_empty() {
                    self.save();
                }
            }
            Err(error) => self.problem.set(Some(error.to_string())),
        }
        self.loaded.set(true);
    }

    /// `image` (the model's input) joins the set as `label`.
    pub fn add(self, image: &[u8], label: u8) -> Result<(), ChangeError> {
        let image: [u8; IMAGE_PIXELS] = image.try_into().expect("the model's input is 28×28");
        self.change(|set| {
            if set.len() >= MAX_PERSONAL_DIGITS {
                return Err(ChangeError::Full);
            }
            set.images.push(image);
            set.labels.push(label.min(9));
            Ok(())
        })
    }

    /// Digit `index` is `label`.
    pub fn relabel(self, index: usize, label: u8) {
        let _ = self.change(|set| {
            if let Some(kept) = set.labels.get_mut(index) {
                *kept = label.min(9);
            }
            Ok(())
        });
    }

    pub fn delete(self, index: usize) {
        let _ = self.change(|set| {
            if index < set.len() {
                set.images.remove(index);
                set.labels.remove(index);
            }
            Ok(())
        });
    }

    pub fn delete_all(self) {
        let _ = self.change(|set| {
            *set = PersonalSet::default();
            Ok(())
        });
    }

    /// The digits of MNIST's two gzip files (in either order) added after the set's own; how
    /// many came.
    pub fn import(self, first: &[u8], second: &[u8]) -> Result<usize, ChangeError> {
        let imported = PersonalSet::from_either_idx_gz(first, second)?;
        let count = imported.len();
        self.change(|set| {
            let total = set.len().saturating_add(count);
            if total > MAX_PERSONAL_DIGITS {
                return Err(ChangeError::ImportTooLarge(total));
            }
            set.images.extend(imported.images);
            set.labels.extend(imported.labels);
            Ok(())
        })?;
        Ok(count)
    }

    /// Applies `edit` to the set now and keeps the result (written once the kept set is read).
    fn change(
        self,
        edit: impl FnOnce(&mut PersonalSet) -> Result<(), ChangeError>,
    ) -> Result<(), ChangeError> {
        let mut set = (*self.set.get_untracked()).clone();
        edit(&mut set)?;
        self.set.set(Arc::new(set));
        match self.kept.get_value() {
            Kept::Writing => self.save(),
            // `load` writes what was added once it has read the kept set.
            Kept::Unread => spawn_local(self.load()),
            Kept::InMemory => {}
        }
        Ok(())
    }

    /// Writes the set now; transactions land in the order they were made.
    fn save(self) {
        let Some(db) = self.db.get_value() else {
            return;
        };
        let set = self.set.get_untracked();
        let problem = self.problem;
        spawn_local(async move {
            match db.save(&set).await {
                Ok(()) => problem.set(None),
                Err(error) => problem.set(Some(error.to_string())),
            }
        });
    }
}
