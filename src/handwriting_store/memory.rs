//! The digit store in memory: what the native tests keep a set in. Each call is whole before
//! it returns, as a transaction is.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use super::{DigitId, DigitStore, DigitStoreError, KeptDigit};
use crate::data::MAX_PERSONAL_DIGITS;

/// A digit store in memory, its records as bytes; clones share it.
#[derive(Debug, Clone, Default)]
pub struct MemoryDigits {
    records: Rc<RefCell<BTreeMap<DigitId, Vec<u8>>>>,
}

impl MemoryDigits {
    /// Puts `bytes` under `id` as hostile storage might.
    pub fn put_raw(&self, id: DigitId, bytes: Vec<u8>) {
        self.records.borrow_mut().insert(id, bytes);
    }

    /// The bytes kept under `id`.
    pub fn raw(&self, id: DigitId) -> Option<Vec<u8>> {
        self.records.borrow().get(&id).cloned()
    }
}

impl DigitStore for MemoryDigits {
    async fn all(&self) -> Result<(Vec<KeptDigit>, usize), DigitStoreError> {
        let records = self.records.borrow();
        let read: Vec<_> = records
            .iter()
            .map(|(&id, bytes)| KeptDigit::from_bytes(id, bytes))
            .collect();
        let unreadable = read.iter().filter(|d| d.is_err()).count();
        Ok((read.into_iter().flatten().collect(), unreadable))
    }

    async fn add(&self, digits: &[KeptDigit]) -> Result<(), DigitStoreError> {
        let mut records = self.records.borrow_mut();
        if let Some(taken) = digits.iter().find(|d| records.contains_key(&d.id)) {
            return Err(DigitStoreError::Failed(format!(
                "digit id {} is taken",
                taken.id
            )));
        }
        if records.len().saturating_add(digits.len()) > MAX_PERSONAL_DIGITS {
            return Err(DigitStoreError::TooMany);
        }
        for digit in digits {
            records.insert(digit.id, digit.to_bytes());
        }
        Ok(())
    }

    async fn relabel(&self, id: DigitId, base: u32, label: u8) -> Result<u32, DigitStoreError> {
        let mut records = self.records.borrow_mut();
        let Some(bytes) = records.get(&id) else {
            return Err(DigitStoreError::Gone(id));
        };
        let mut digit =
            KeptDigit::from_bytes(id, bytes).map_err(|e| DigitStoreError::Read(e.to_string()))?;
        if digit.revision != base {
            return Err(DigitStoreError::Moved(id));
        }
        digit.label = label.min(9);
        digit.revision = base.saturating_add(1);
        records.insert(id, digit.to_bytes());
        Ok(digit.revision)
    }

    async fn delete(&self, id: DigitId) -> Result<(), DigitStoreError> {
        self.records.borrow_mut().remove(&id);
        Ok(())
    }

    async fn delete_all(&self) -> Result<(), DigitStoreError> {
        self.records.borrow_mut().clear();
        Ok(())
    }
}
