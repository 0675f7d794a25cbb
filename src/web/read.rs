//! Tensors read back without blocking: the browser forbids a synchronous read.

use burn::tensor::{Int, Tensor};

/// A tensor that did not come back from the device (a lost WebGPU device, say).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("reading the {what} back failed: {cause}")]
pub struct ReadError {
    /// What was read ("predictions").
    what: String,
    /// The innermost cause Burn gave.
    cause: String,
}

fn failed(what: &str, error: &dyn std::fmt::Display) -> ReadError {
    ReadError {
        what: what.to_string(),
        cause: innermost_cause(&error.to_string()),
    }
}

/// Burn's execution errors nest "An error happened during execution / Caused by:" once per
/// layer and end with a backtrace: the innermost cause is the part that says what happened,
/// and the only part short enough for the page's one-line note.
fn innermost_cause(text: &str) -> String {
    let before_backtrace = text.split("Backtrace:").next().unwrap_or_default();
    let cause = before_backtrace
        .rsplit("Caused by:")
        .next()
        .unwrap_or_default();
    cause.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub async fn read_floats_async<const D: usize>(
    tensor: Tensor<D>,
    what: &str,
) -> Result<Vec<f32>, ReadError> {
    tensor
        .into_data_async()
        .await
        .map_err(|e| failed(what, &e))?
        .convert::<f32>()
        .try_into_vec::<f32>()
        .map_err(|e| failed(what, &e))
}

pub async fn read_ints_async<const D: usize>(
    tensor: Tensor<D, Int>,
    what: &str,
) -> Result<Vec<i64>, ReadError> {
    tensor
        .into_data_async()
        .await
        .map_err(|e| failed(what, &e))?
        .convert::<i64>()
        .try_into_vec::<i64>()
        .map_err(|e| failed(what, &e))
}
