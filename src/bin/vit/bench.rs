//! `vit bench`: training throughput, batch-1 latency and (on a GPU) kernel launches.

use std::time::Instant;

use vitlab::launch_count::Launches;
#[cfg(feature = "gpu")]
use vitlab::launch_count::count_launches;
use vitlab::model::{Budget, Classifier, CpuKernels, ModelConfig, seed_randomness};
use vitlab::native;
use vitlab::train::{OptimizerSettings, Trainer};

use crate::args::{Common, DeviceChoice};
use crate::error::CliError;
use crate::setup;

/// Peak resident memory of this process so far, from /proc (Linux), in MB.
fn peak_memory_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// How much a benchmark measures.
pub struct Work {
    pub steps: usize,
    pub batch_size: usize,
    pub inferences: usize,
}

pub fn bench(
    work: Work,
    (name, config): (&str, ModelConfig),
    kernels: CpuKernels,
    common: Common,
) -> Result<(), CliError> {
    const WARMUP: usize = 5;
    let Work {
        steps,
        batch_size,
        inferences,
    } = work;
    let batch = batch_size;
    // Training and inference below run on this thread, which the choice is made for.
    kernels.choose();
    let (data_dir, device) = setup(&common)?;
    let threads = common.threads.unwrap_or_else(rayon::current_num_threads);
    let manifest = native::read_manifest(&data_dir)?;
    let set = native::load_chunk(&data_dir, &manifest.train[0])?;
    if batch == 0 || batch > set.len() || steps == 0 || inferences == 0 {
        return Err(CliError::BenchSizes { images: set.len() });
    }
    config.check_budget(&Budget::CLI, Some(batch))?;
    seed_randomness(&device, 0);
    let mut trainer = Trainer::new(
        config.init(&device),
        config.clone(),
        OptimizerSettings::default(),
        &device,
    );
    let batches: Vec<Vec<usize>> = (0..WARMUP + steps)
        .map(|i| {
            let start = (i * batch) % (set.len() - batch + 1);
            (start..start + batch).collect()
        })
        .collect();
    let mut started = Instant::now();
    for (i, indices) in batches.iter().enumerate() {
        if i == WARMUP {
            started = Instant::now();
        }
        // The batch is made inside the timed loop, as a training loop must.
        let batch = set.batch(indices, trainer.device());
        let loss = trainer.step(&batch, 1e-3).loss.into_scalar::<f32>();
        if !loss.is_finite() {
            return Err(CliError::BenchLoss);
        }
    }
    let train_rate = (steps * batch) as f64 / started.elapsed().as_secs_f64();
    let train_peak = peak_memory_mb();

    let model = trainer.inference_model();
    let mut latencies = Vec::with_capacity(inferences);
    for i in 0..WARMUP + inferences {
        let started = Instant::now();
        let batch = set.batch(&[i % set.len()], &device);
        let logits = model.forward(batch.images).into_data();
        std::hint::black_box(logits);
        if i >= WARMUP {
            latencies.push(started.elapsed().as_secs_f64() * 1e3);
        }
    }
    latencies.sort_by(f64::total_cmp);
    let launches = count_gpu_launches(&common, &set, &mut trainer, &model, &batches[0]);
    let summary = serde_json::json!({
        "implementation": match (common.device, kernels) {
            (DeviceChoice::Cpu, CpuKernels::Fused) => "vitlab (Burn, flex CPU backend)",
            (DeviceChoice::Cpu, CpuKernels::Composed) => "vitlab (Burn, flex CPU backend, Burn's ops)",
            (DeviceChoice::Gpu, _) => "vitlab (Burn, wgpu)",
        },
        "cpu_kernels": match kernels {
            CpuKernels::Fused => "fused",
            CpuKernels::Composed => "composed",
        },
        "preset": name,
        "threads": threads,
        "train_images_per_s": train_rate,
        "latency_p50_ms": percentile(&latencies, 0.5),
        "latency_p95_ms": percentile(&latencies, 0.95),
        "peak_memory_mb": train_peak,
        "batch_size": batch,
        "dispatches_per_step": launches.as_ref().map(|(step, _)| step.total),
        "dispatches_per_inference": launches.as_ref().map(|(_, inference)| inference.total),
        "kernels_per_step": launches.as_ref().map(|(step, _)| &step.by_kernel),
    });
    println!(
        "{threads} thread(s): training {train_rate:.0} images/s (batch {batch}); batch-1 latency p50 {:.2} ms, p95 {:.2} ms; peak memory {:.0} MB",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.95),
        train_peak.unwrap_or(f64::NAN)
    );
    if let Some((step, inference)) = &launches {
        for (what, launches) in [("training step", step), ("batch-1 inference", inference)] {
            let top: Vec<String> = launches
                .by_kernel
                .iter()
                .take(8)
                .map(|(kernel, count)| format!("{count} {kernel}"))
                .collect();
            println!(
                "GPU dispatches per {what}: {} (most: {})",
                launches.total,
                top.join(", ")
            );
        }
    }
    println!("{summary}");
    Ok(())
}

/// GPU kernels launched by one training step (the mean of three) and by one batch-1
/// inference, each with its result read back; `None` on the CPU.
#[cfg(feature = "gpu")]
fn count_gpu_launches(
    common: &Common,
    set: &vitlab::data::MnistSet,
    trainer: &mut Trainer,
    model: &Classifier,
    indices: &[usize],
) -> Option<(Launches, Launches)> {
    if common.device != DeviceChoice::Gpu {
        return None;
    }
    const STEPS: usize = 3;
    let batch = set.batch(indices, trainer.device());
    let (_, mut step) = count_launches(|| {
        for _ in 0..STEPS {
            let _ = trainer.step(&batch, 1e-3).loss.into_scalar::<f32>();
        }
    });
    step.total /= STEPS;
    step.by_kernel
        .iter_mut()
        .for_each(|(_, count)| *count = count.div_ceil(STEPS));
    // What a drawing costs in the page: probabilities and every map, read back at once.
    let device = trainer.device().clone().inner();
    let images = vitlab::analysis::inference::images_of(set, 1);
    let (_, inference) = count_launches(|| {
        let pending = vitlab::analysis::inference::classify(model, &images, None, &device);
        let _ = pending.packed.into_data();
    });
    Some((step, inference))
}

#[cfg(not(feature = "gpu"))]
fn count_gpu_launches(
    _: &Common,
    _: &vitlab::data::MnistSet,
    _: &mut Trainer,
    _: &Classifier,
    _: &[usize],
) -> Option<(Launches, Launches)> {
    None
}
