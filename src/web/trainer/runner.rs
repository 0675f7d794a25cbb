//! The owner of the run in progress: the training loop holds one, the page's commands start,
//! end and change the run through it, and `stepping.rs` adds the steps.

use crate::protocol::RunState;

use super::run::Run;

/// The run in progress, if there is one.
#[derive(Default)]
pub(super) struct Runner {
    run: Option<Run>,
    /// The page is hidden: the run is kept every [`crate::protocol::KEEP_WHILE_HIDDEN_MS`].
    pub(super) page_hidden: bool,
}

impl Runner {
    pub(super) fn run(&self) -> Option<&Run> {
        self.run.as_ref()
    }

    pub(super) fn run_mut(&mut self) -> Option<&mut Run> {
        self.run.as_mut()
    }

    /// The run, if it is in `state`.
    pub(super) fn run_in(&mut self, state: RunState) -> Option<&mut Run> {
        self.run.as_mut().filter(|run| run.state == state)
    }

    /// `run` from now on; whatever ran before is dropped.
    pub(super) fn begin(&mut self, run: Run) {
        self.run = Some(run);
    }

    /// Drops the run (its helper worker with it).
    pub(super) fn end(&mut self) {
        self.run = None;
    }
}
