#![cfg(not(target_arch = "wasm32"))]
//! Native tests, in one binary so that Burn is linked once.

mod ablation;
mod architecture;
mod cli;
mod cnn;
mod cpu_matmul;
mod csv;
mod data;
mod data_scaling;
mod doc_names;
mod example_digit;
mod fuzz;
mod gzip;
mod handwriting_store;
mod helper;
mod hostile;
mod insight;
mod kernels;
mod model;
mod occlusion;
mod one_loop;
mod parity;
mod personal;
mod place;
mod preprocess;
mod protocol;
mod reading;
mod relevance;
mod run_record;
mod run_store;
mod run_view;
mod session;
mod share;
mod shipped;
mod slice_mean;
mod story;
mod tab_session;
mod timeline;
mod train;
mod weights;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use burn::tensor::{Device, Tensor};

pub fn device() -> Device {
    Device::flex()
}

pub fn to_vec<const D: usize>(tensor: Tensor<D>) -> Vec<f32> {
    tensor
        .into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .unwrap()
}

/// A deterministic batch of normalised-looking inputs.
pub fn sample_images(batch: usize, side: usize, device: &Device) -> Tensor<4> {
    let values: Vec<f32> = (0..batch * side * side)
        .map(|i| ((i * 7919 % 255) as f32 / 255.0 - 0.1307) / 0.3081)
        .collect();
    Tensor::<1>::from_floats(values.as_slice(), device).reshape([batch, 1, side, side])
}

/// Runs a future that never waits on anything outside itself (the CPU backend's reads).
pub fn run_now<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the future waited on something"),
    }
}

/// Runs the ignored test `test` (a path such as `fuzz::alone`) in a process of its own: this
/// binary, that test alone, on one thread, with the variable `job.0` set to `job.1`. Its
/// output; a failure shows it. For what must not share a process with other tests: Burn's
/// one generator per process, a meter of the whole process's memory.
pub fn in_own_process(test: &str, job: (&str, &str)) -> String {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            test,
            "--ignored",
            "--test-threads",
            "1",
            "--nocapture",
        ])
        .env(job.0, job.1)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{test} ({}={}) failed:\n{stdout}\n{}",
        job.0,
        job.1,
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("1 passed"), "{test} did not run:\n{stdout}");
    stdout
}

/// A freshly initialised model of `config` as a weights file.
pub fn fresh_weights(config: impl Into<vitlab::model::ModelConfig>) -> Vec<u8> {
    let config = config.into();
    vitlab::weights::to_safetensors(&config.init(&device()), &config)
}
