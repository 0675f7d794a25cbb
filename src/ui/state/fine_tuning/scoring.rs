//! How a fine-tuning on a person's set is scored: a part held out of its one run, or, for a
//! set too small to spare a part, each digit in turn: `k` runs that each hold out a fold and
//! score it, then one more on every digit, which is the model kept (k-fold cross-validation).

use crate::data::PersonalSet;

/// The folds of "each digit in turn" (fewer for a set of fewer digits).
const FOLDS: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scoring {
    /// Every this many digits, one is held out.
    HoldOut(usize),
    /// Each digit is held out by one of this many runs.
    Folds(usize),
}

/// One run of a fine-tuning: what it trains on, and which digits of the set it scores.
pub(super) struct Part {
    pub trained: PersonalSet,
    pub scores: Vec<usize>,
}

impl Scoring {
    pub const CHOICES: [Scoring; 6] = [
        Scoring::HoldOut(2),
        Scoring::HoldOut(3),
        Scoring::HoldOut(4),
        Scoring::HoldOut(5),
        Scoring::HoldOut(10),
        Scoring::Folds(FOLDS),
    ];

    /// As an option's value.
    pub fn value(self) -> String {
        match self {
            Self::HoldOut(every) => every.to_string(),
            Self::Folds(folds) => format!("folds-{folds}"),
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::CHOICES.into_iter().find(|c| c.value() == value)
    }

    pub fn label(self) -> String {
        match self {
            Self::HoldOut(every) => format!("1 digit in {every} held out"),
            Self::Folds(folds) => format!("each digit in turn ({folds} folds)"),
        }
    }

    /// Whether a set of `digits` can be scored this way: every run has digits to learn from
    /// and digits to score.
    pub fn fits(self, digits: usize) -> bool {
        match self {
            Self::HoldOut(every) => digits >= every,
            Self::Folds(_) => digits >= 2,
        }
    }

    /// The folds of "each digit in turn" for a set of `digits` (fewer for a small set, two at
    /// least); 1 for a held-out part.
    pub fn folds(self, digits: usize) -> usize {
        match self {
            Self::HoldOut(_) => 1,
            Self::Folds(folds) => folds.min(digits).max(2),
        }
    }

    /// The digits scored, for a set of `digits`: the held-out part's, or all of them.
    pub fn scored(self, digits: usize) -> usize {
        match self {
            Self::HoldOut(every) => digits / every,
            Self::Folds(_) => digits,
        }
    }

    /// The most digits one of the runs learns from, for a set of `digits`.
    pub fn largest_run(self, digits: usize) -> usize {
        match self {
            // Digits every-1, 2·every-1, … are held out.
            Self::HoldOut(every) => digits - digits / every,
            // The last run learns them all.
            Self::Folds(_) => digits,
        }
    }

    /// The runs that score `set`, in order, and the digits of one more run that learns every
    /// digit, where the scoring runs do not give the model kept (a held-out part's one run
    /// is the model kept).
    pub(super) fn parts(self, set: &PersonalSet) -> (Vec<Part>, Option<PersonalSet>) {
        let part = |folds: usize, fold: usize| Part {
            trained: set.fold(folds, fold).0,
            scores: (fold..set.len()).step_by(folds).collect(),
        };
        match self {
            Self::HoldOut(every) => (vec![part(every, every - 1)], None),
            Self::Folds(_) => {
                let folds = self.folds(set.len());
                let parts = (0..folds).map(|fold| part(folds, fold)).collect();
                (parts, Some(set.clone()))
            }
        }
    }
}
