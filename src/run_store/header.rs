//! What a checkpoint says of its run, read from its header without its tensors (the page,
//! which offers a resume, has no training code), and checked: a damaged or hostile one is
//! reported rather than resumed, or left to panic on every load.

use crate::train::{SESSION_KEY, SavedRunError, SavedSummary, SessionState};

/// Why a checkpoint cannot be resumed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HeaderError {
    #[error("its state does not parse ({0})")]
    Unreadable(String),
    #[error(transparent)]
    State(#[from] SavedRunError),
}

/// The run's state in a checkpoint's header, and what the page offers of it.
pub fn read_header(bytes: &[u8]) -> Result<(SessionState, SavedSummary), HeaderError> {
    let unreadable = |why: String| HeaderError::Unreadable(why);
    // Held to this reader's bounds first: the format's own reader allows headers far larger.
    crate::weights::check_header_bounds(bytes).map_err(|error| unreadable(error.to_string()))?;
    // The whole file's layout, not only its header: a file cut short is refused here.
    safetensors::SafeTensors::deserialize(bytes)
        .map_err(|error| unreadable(crate::weights::brief(&error)))?;
    let (_, header) = safetensors::SafeTensors::read_metadata(bytes)
        .map_err(|error| unreadable(crate::weights::brief(&error)))?;
    let json = header
        .metadata()
        .as_ref()
        .and_then(|metadata| metadata.get(SESSION_KEY))
        .ok_or_else(|| unreadable(format!("no {SESSION_KEY}")))?;
    let state: SessionState =
        serde_json::from_str(json).map_err(|error| unreadable(crate::weights::brief(&error)))?;
    let summary = state.summary()?;
    Ok((state, summary))
}
