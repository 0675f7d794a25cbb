//! The page's side of the training worker: a [`Link`] that hands the panel each message and
//! tells it once when the worker died.

use crate::protocol::{FromTrainer, ToTrainer};

use crate::web::CPU_WORKERS_PARAM;
use crate::web::link::{Heard, Link, LinkError, WorkerRole};

/// Why the training worker can no longer be used, as the panel says it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrainerLost {
    /// It died and its `error` event said nothing.
    #[error("the training worker stopped")]
    Stopped,
    /// What its `error` event said (a panic's message, a lost device).
    #[error("{0}")]
    Said(String),
}

/// A running training worker; dropping it ends the worker.
pub struct TrainerWorker {
    link: Link<ToTrainer>,
}

impl TrainerWorker {
    /// Starts the worker, which trains on the CPU in `cpu_workers` workers where given (else
    /// one per core). `on_message` gets each message with the bytes sent beside it; `on_lost`
    /// hears when the worker dies (a panic, a lost device, out of memory).
    pub fn spawn(
        cpu_workers: Option<usize>,
        mut on_message: impl FnMut(FromTrainer, Option<Vec<u8>>) + 'static,
        mut on_lost: impl FnMut(TrainerLost) + 'static,
    ) -> Result<Self, LinkError> {
        let workers = cpu_workers
            .map(|count| format!("&{CPU_WORKERS_PARAM}={count}"))
            .unwrap_or_default();
        let link = Link::spawn(WorkerRole::Train, &workers, move |heard| match heard {
            Heard::Message(message, _, bytes) => on_message(message, bytes),
            Heard::Trouble(LinkError::Stopped { said, .. }) => {
                on_lost(said.map_or(TrainerLost::Stopped, TrainerLost::Said))
            }
            // Ended unused: nothing it would say can be read here.
            Heard::Trouble(error @ LinkError::Outdated { .. }) => {
                on_lost(TrainerLost::Said(error.to_string()))
            }
            // A command that could not be posted is dropped: the panel shows the state the
            // worker reports, not the one it asked for. (A link that hears anything has started.)
            Heard::Trouble(LinkError::Refused { .. } | LinkError::NotStarted { .. }) => {}
            Heard::Trouble(error @ LinkError::Unreadable(_)) => {
                web_sys::console::warn_1(&format!("the training worker sent {error}").into())
            }
        })?;
        Ok(Self { link })
    }

    /// Sends `message`, with `bytes` (a run file) beside it.
    pub fn send(&self, message: &ToTrainer, bytes: Option<Vec<u8>>) {
        // As above: a command that could not be posted shows in the state the worker then
        // does not report.
        let _ = self.link.send(message, bytes);
    }
}
