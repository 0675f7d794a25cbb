//! Tensors read back without blocking: the browser forbids a synchronous read.

use burn::tensor::{Int, Tensor};

fn failed(what: &str, error: &dyn std::fmt::Debug) -> String {
    format!("reading the {what} back from the device failed: {error:?}")
}

pub async fn read_floats<const D: usize>(
    tensor: Tensor<D>,
    what: &str,
) -> Result<Vec<f32>, String> {
    tensor
        .into_data_async()
        .await
        .map_err(|e| failed(what, &e))?
        .convert::<f32>()
        .try_into_vec::<f32>()
        .map_err(|e| failed(what, &e))
}

pub async fn read_ints<const D: usize>(
    tensor: Tensor<D, Int>,
    what: &str,
) -> Result<Vec<i64>, String> {
    tensor
        .into_data_async()
        .await
        .map_err(|e| failed(what, &e))?
        .convert::<i64>()
        .try_into_vec::<i64>()
        .map_err(|e| failed(what, &e))
}
