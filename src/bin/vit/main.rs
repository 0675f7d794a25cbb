//! `vit`: the native command line. Prepares the chunked data, trains, evaluates, averages,
//! measures occlusion and heads, and benchmarks; one file per command.

#[cfg(not(target_arch = "wasm32"))]
mod ablate;
#[cfg(not(target_arch = "wasm32"))]
mod args;
#[cfg(not(target_arch = "wasm32"))]
mod average;
#[cfg(not(target_arch = "wasm32"))]
mod bench;
#[cfg(not(target_arch = "wasm32"))]
mod classify;
#[cfg(not(target_arch = "wasm32"))]
mod error;
#[cfg(not(target_arch = "wasm32"))]
mod eval;
#[cfg(not(target_arch = "wasm32"))]
mod files;
#[cfg(not(target_arch = "wasm32"))]
mod hide;
#[cfg(not(target_arch = "wasm32"))]
mod occlusion;
#[cfg(not(target_arch = "wasm32"))]
mod prepare;
#[cfg(not(target_arch = "wasm32"))]
mod train;

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    use clap::Parser;
    let cli = args::Cli::parse();
    let result = start_process(cli.command.common()).and_then(|()| on_pool(|| run(cli.command)));
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
use args::{Command, Common, DeviceChoice, ModelChoice};
#[cfg(not(target_arch = "wasm32"))]
use burn::tensor::Device;
#[cfg(not(target_arch = "wasm32"))]
use error::CliError;
#[cfg(not(target_arch = "wasm32"))]
use std::path::PathBuf;
#[cfg(not(target_arch = "wasm32"))]
use vitlab::model::{HeadsOff, ModelConfig, Preset};
#[cfg(not(target_arch = "wasm32"))]
use vitlab::native;

#[cfg(not(target_arch = "wasm32"))]
/// What must be set before any other thread exists: the allocator, Burn's default device
/// (checkpoints load their tensors onto it, and with the `gpu` feature it would be the GPU
/// even for a CPU run) and the size of the CPU thread pool.
fn start_process(common: Option<&Common>) -> Result<(), CliError> {
    native::keep_freed_memory();
    native::quit_on_closed_pipe();
    let Some(common) = common else {
        return Ok(());
    };
    let default_device = match common.device {
        DeviceChoice::Cpu => "flex",
        DeviceChoice::Gpu => "wgpu",
    };
    // SAFETY: single-threaded still; nothing reads the environment concurrently.
    unsafe { std::env::set_var("BURN_DEVICE", default_device) };
    match common.threads {
        Some(threads) => Ok(native::set_threads(threads)?),
        None => Ok(()),
    }
}

#[cfg(not(target_arch = "wasm32"))]
/// Runs `work` on a worker of the CPU pool rather than on the main thread. Burn's CPU
/// kernels then split work from inside the pool instead of handing every operation to a
/// pool thread and sleeping until it is done: on this VM, waking a thread on an idle core
/// per operation made batch-1 inference 1.4 ms instead of 0.5 ms.
fn on_pool<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    let mut result = None;
    rayon::scope(|_| result = Some(work()));
    result.expect("the scope ran the work")
}

#[cfg(not(target_arch = "wasm32"))]
fn run(command: Command) -> Result<(), CliError> {
    match command {
        Command::PrepareData {
            idx,
            out,
            chunk_items,
        } => prepare::prepare_data(idx, out, chunk_items),
        Command::Average { out, weights } => average::average(out, weights),
        Command::Eval {
            weights,
            split,
            val,
            personal,
            json,
            common,
        } => eval::eval(weights, split, val, personal, json, common),
        Command::Occlusion {
            vit,
            cnn,
            images,
            seed,
            json,
            common,
        } => occlusion::occlusion(vit, cnn, images, seed, json, common),
        Command::Hide {
            vit,
            cnn,
            image,
            hidden,
            json,
            common,
        } => hide::hide(&vit, &cnn, &image, &hidden, json, &common),
        Command::Classify {
            weights,
            image,
            off,
            replacement,
            mean_images,
            story,
            json,
            common,
        } => classify::classify(
            &weights,
            &image,
            classify::SwitchOff {
                heads: HeadsOff::new(off.0, replacement.replacement()),
                mean_images,
            },
            classify::Told { story, json },
            &common,
        ),
        Command::Ablate {
            weights,
            images,
            replacement,
            mean_images,
            csv,
            json,
            common,
        } => ablate::ablate(
            &weights,
            ablate::Measure {
                images,
                replacement,
                mean_images,
            },
            csv.as_deref(),
            json,
            &common,
        ),
        Command::Train(args) => train::train(*args),
        Command::Bench {
            steps,
            batch_size,
            inferences,
            preset,
            model,
            cpu_kernels,
            common,
        } => bench::bench(
            bench::Work {
                steps,
                batch_size,
                inferences,
            },
            {
                let preset = match model {
                    ModelChoice::Vit => preset,
                    ModelChoice::Cnn => Preset::Cnn,
                };
                (preset.name(), ModelConfig::preset(preset))
            },
            cpu_kernels.kernels(),
            common,
        ),
    }
}

#[cfg(not(target_arch = "wasm32"))]
/// The data folder and the compute device.
fn setup(common: &Common) -> Result<(PathBuf, Device), CliError> {
    let device = match common.device {
        DeviceChoice::Cpu => Device::flex(),
        #[cfg(feature = "gpu")]
        DeviceChoice::Gpu => Device::wgpu(burn::tensor::DeviceKind::DefaultDevice),
        #[cfg(not(feature = "gpu"))]
        DeviceChoice::Gpu => {
            return Err(CliError::NoGpu);
        }
    };
    let data = common.data.clone().unwrap_or_else(native::default_data_dir);
    Ok((data, device))
}
