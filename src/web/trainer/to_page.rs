//! What the training worker says to the page, from wherever in the worker it is said.

use crate::protocol::{FromTrainer, RunState, TrainerFailure};

use crate::web::packet::Packet;

/// Sends a message to the page; weights bytes go beside it, transferred rather than copied.
pub(super) fn post(message: &FromTrainer, bytes: Option<Vec<u8>>) {
    Packet::new(message, bytes).send_to_page();
}

pub(super) fn notice(message: impl Into<String>, warning: bool) {
    post(
        &FromTrainer::Notice {
            message: message.into(),
            warning,
        },
        None,
    );
}

/// The run is gone, or never began: says why, and the page goes back to idle.
pub(super) fn fail_without_run(why: TrainerFailure) {
    post(&FromTrainer::Failed(why), None);
    post(
        &FromTrainer::State {
            state: RunState::Idle,
        },
        None,
    );
}
