//! The parts of the run's view the panel draws, each a memo of its own.

use leptos::prelude::*;
use reactive_stores::Store;

use crate::analysis::timeline::Timeline;
use crate::protocol::{BackendKind, DataProgress, DeviceNote, RunState, SavedSummary};
use crate::run_view::{Notice, RunFailure, RunView, RunViewStoreFields, SavedProblem};
use crate::train::{CellDigits, History, StepReport, TestReport};

/// Each message changes the store as a whole, which wakes every reader of it: each part of
/// the panel reads a memo of its own part instead, and redraws only when that part changed
/// (the samples, the confusion matrix and the notices not at every step report).
#[derive(Clone, Copy)]
pub struct Shown {
    pub state: Memo<RunState>,
    pub backend: Memo<Option<BackendKind>>,
    pub device_note: Memo<Option<DeviceNote>>,
    pub workers: Memo<usize>,
    pub data: Memo<DataProgress>,
    pub samples: Memo<Vec<(Vec<u8>, u8)>>,
    pub history: Memo<History>,
    pub report: Memo<Option<StepReport>>,
    pub test: Memo<Option<TestReport>>,
    pub cell: Memo<Option<CellDigits>>,
    pub timeline: Memo<Timeline>,
    pub notices: Memo<Vec<Notice>>,
    pub failure: Memo<Option<RunFailure>>,
    /// The run saved in this browser, or why it cannot be resumed (as the browser layer
    /// says it).
    pub saved: Memo<Option<Result<SavedSummary, SavedProblem>>>,
    pub fine_tunes_on: Memo<Option<usize>>,
}

impl Shown {
    pub fn of(run: Store<RunView>) -> Self {
        Self {
            state: Memo::new(move |_| run.state().get()),
            backend: Memo::new(move |_| run.backend().get()),
            device_note: Memo::new(move |_| run.device_note().get()),
            workers: Memo::new(move |_| run.workers().get()),
            data: Memo::new(move |_| run.data().get()),
            samples: Memo::new(move |_| run.samples().get()),
            history: Memo::new(move |_| run.history().get()),
            report: Memo::new(move |_| run.report().get()),
            test: Memo::new(move |_| run.test().get()),
            cell: Memo::new(move |_| run.cell().get()),
            timeline: Memo::new(move |_| run.timeline().get()),
            notices: Memo::new(move |_| run.notices().get()),
            failure: Memo::new(move |_| run.failure().get()),
            saved: Memo::new(move |_| run.saved().get()),
            fine_tunes_on: Memo::new(move |_| run.fine_tunes_on().get()),
        }
    }
}
