//! Which device a run trains on when the page leaves it open: WebGPU where it proves faster
//! than the CPU over a few steps of the run's own model and batch size, the CPU otherwise.

use burn::tensor::{Device, Int, Tensor};

use crate::data::{Batch, IMAGE_SIDE};
use crate::protocol::DeviceNote;
use crate::train::{Trainer, TrainingPlan};

use super::global::{now_ms, within_ms};
use super::helper::HelperWorker;
use super::read::{ReadError, read_floats_async};
use super::{StartedDevice, gpu_checked, start_device};
use crate::protocol::BackendKind;

/// Steps timed on each device, after one that warms it up (and compiles the GPU's kernels).
const TIMED_STEPS: usize = 2;
/// A GPU slower than this to warm up and take its timed steps loses the trial (a software
/// GPU can take minutes to compile every kernel of a training step).
const GPU_TRIAL_DEADLINE_MS: u32 = 30_000;

/// Helpers not ready by then are left out of the CPU's trial.
const HELPER_DEADLINE_MS: f64 = 10_000.0;

/// The device asked for; or with none asked for, the faster of WebGPU and the CPU for `plan`,
/// with a note that says both times. The CPU is timed with the `helpers` that are ready, as it
/// would train.
pub async fn training_device(
    preferred: Option<BackendKind>,
    plan: &TrainingPlan,
    helpers: &[HelperWorker],
) -> StartedDevice {
    if preferred.is_some() {
        return start_device(preferred).await;
    }
    let gpu = start_device(Some(BackendKind::WebGpu)).await;
    if gpu.backend != BackendKind::WebGpu {
        return gpu;
    }
    let cpu = StartedDevice {
        device: Device::flex(),
        backend: BackendKind::Cpu,
        fallback_reason: None,
    };
    let until = now_ms() + HELPER_DEADLINE_MS;
    for helper in helpers {
        helper.ready_within((until - now_ms()).max(0.0)).await;
    }
    let cpu_ms = match step_ms(plan, &cpu.device, helpers).await {
        Ok(ms) => ms,
        // The CPU cannot even take a step: the GPU is all there is.
        Err(_) => return gpu,
    };
    // Checked: a kernel the GPU rejects fails the trial, rather than the run's steps later.
    // The deadline outside the check: past it, the scopes are dropped unread rather than
    // waited for behind whatever the GPU is still compiling.
    let trial = within_ms(
        GPU_TRIAL_DEADLINE_MS,
        gpu_checked(step_ms(plan, &gpu.device, &[])),
    );
    let note = match trial.await {
        Some(Err(rejected)) => DeviceNote::TrialFailed(rejected.to_string()),
        Some(Ok(Ok(gpu_ms))) if gpu_ms < cpu_ms => {
            return StartedDevice {
                fallback_reason: Some(DeviceNote::Chosen { gpu_ms, cpu_ms }),
                ..gpu
            };
        }
        Some(Ok(Ok(gpu_ms))) => DeviceNote::CpuFaster { cpu_ms, gpu_ms },
        Some(Ok(Err(error))) => DeviceNote::TrialFailed(error.to_string()),
        None => DeviceNote::GpuTooSlow {
            deadline_s: f64::from(GPU_TRIAL_DEADLINE_MS / 1000),
            cpu_ms,
        },
    };
    StartedDevice {
        fallback_reason: Some(note),
        ..cpu
    }
}

/// Milliseconds a training step of `plan` takes on `device`: the median of [`TIMED_STEPS`]
/// after a warm-up step, on a made-up batch (the pixels do not change the time) with a model
/// that is thrown away; on the CPU with the help of the `helpers` that are ready.
async fn step_ms(
    plan: &TrainingPlan,
    device: &Device,
    helpers: &[HelperWorker],
) -> Result<f64, ReadError> {
    let mut trainer = Trainer::new(
        plan.config.init(device),
        plan.config.clone(),
        plan.optimizer(),
        device,
    );
    let batch = Batch {
        images: Tensor::zeros(
            [plan.batch_size, 1, IMAGE_SIDE, IMAGE_SIDE],
            trainer.device(),
        ),
        labels: Tensor::<1, Int>::zeros([plan.batch_size], trainer.device()),
    };
    let mut times = Vec::with_capacity(TIMED_STEPS);
    for step in 0..=TIMED_STEPS {
        let started = now_ms();
        let output = trainer.step_with(&batch, plan.lr, helpers).await;
        read_floats_async(output.loss, "a trial step's loss").await?;
        if step > 0 {
            times.push(now_ms() - started);
        }
    }
    times.sort_by(f64::total_cmp);
    Ok(times[TIMED_STEPS / 2])
}
