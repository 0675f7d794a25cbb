//! `vit`: the native command line. Prepares the chunked data, trains, evaluates.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use std::io::IsTerminal;
    use std::path::{Path, PathBuf};
    use std::process::ExitCode;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;

    use burn::tensor::Device;
    use clap::{Args, Parser, Subcommand, ValueEnum};
    use vitlab::data::{Augmentation, Split};
    use vitlab::launch_count::Launches;
    #[cfg(feature = "gpu")]
    use vitlab::launch_count::count_launches;
    use vitlab::model::{Budget, VitConfig, seed_randomness};
    use vitlab::native;
    use vitlab::train::{Checkpoint, OptimizerSettings, SplitMix64, Trainer, TrainingPlan};
    use vitlab::weights::{self, WeightsFile};

    #[derive(Parser)]
    #[command(
        name = "vit",
        version,
        about = "Train and evaluate vitlab's Vision Transformer on MNIST"
    )]
    struct Cli {
        #[command(subcommand)]
        command: Command,
    }

    #[derive(Subcommand)]
    enum Command {
        /// Turn the original MNIST IDX files into the chunks and manifest the page fetches.
        PrepareData {
            /// Folder holding the four IDX files (gzip-compressed or not).
            #[arg(long)]
            idx: PathBuf,
            /// Output folder for the chunks and manifest.json.
            #[arg(long)]
            out: PathBuf,
            /// Images per chunk.
            #[arg(long, default_value_t = 2500)]
            chunk_items: usize,
        },
        /// Average weights files of one config (e.g. a run's last epochs) into one.
        Average {
            /// Where to write the averaged weights.
            #[arg(long)]
            out: PathBuf,
            /// The weights files, two or more.
            #[arg(required = true, num_args = 2..)]
            weights: Vec<PathBuf>,
        },
        /// Test accuracy of a weights file on the 10,000 MNIST test images.
        Eval {
            /// A safetensors file with the seed's tensor names.
            #[arg(long)]
            weights: PathBuf,
            /// End with one line of JSON.
            #[arg(long)]
            json: bool,
            #[command(flatten)]
            common: Common,
        },
        /// Train a ViT on MNIST and save its weights.
        Train(Box<TrainArgs>),
        /// Measure training throughput and batch-1 latency (the seed preset on the CPU unless told).
        Bench {
            /// Timed training steps.
            #[arg(long, default_value_t = 60)]
            steps: usize,
            /// Images per training step.
            #[arg(long, default_value_t = 64)]
            batch_size: usize,
            /// Timed batch-1 inferences.
            #[arg(long, default_value_t = 300)]
            inferences: usize,
            /// Model preset.
            #[arg(long, default_value = "seed")]
            preset: String,
            #[command(flatten)]
            common: Common,
        },
    }

    #[derive(Args)]
    struct Common {
        /// Where to compute: `cpu` (Burn's flex backend) or `gpu` (burn-wgpu on Vulkan, Metal
        /// or DirectX; needs a `vit` built with `--features gpu`).
        #[arg(long, value_enum, default_value_t = DeviceChoice::Cpu)]
        device: DeviceChoice,
        /// Folder with manifest.json and the chunks.
        #[arg(long)]
        data: Option<PathBuf>,
        /// CPU threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Images per evaluation batch.
        #[arg(long, default_value_t = 500, value_parser = at_least_one)]
        eval_batch_size: usize,
    }

    #[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
    enum DeviceChoice {
        Cpu,
        Gpu,
    }

    #[derive(Args)]
    struct TrainArgs {
        /// Model preset: `seed` (patch 7) or `lab` (patch 4).
        #[arg(long, default_value = "seed")]
        preset: String,
        #[arg(long)]
        patch_size: Option<usize>,
        #[arg(long)]
        dim: Option<usize>,
        #[arg(long)]
        depth: Option<usize>,
        #[arg(long)]
        heads: Option<usize>,
        #[arg(long)]
        mlp_dim: Option<usize>,
        #[arg(long)]
        dropout: Option<f64>,
        #[arg(long, default_value_t = 10, value_parser = at_least_one)]
        epochs: usize,
        #[arg(long, default_value_t = 64, value_parser = at_least_one)]
        batch_size: usize,
        /// Peak learning rate.
        #[arg(long, default_value_t = 1e-3)]
        lr: f64,
        /// AdamW weight decay (0 = Adam, as the seed).
        #[arg(long, default_value_t = 0.0)]
        weight_decay: f32,
        /// Warm-up epochs before cosine decay; without it the rate stays constant.
        #[arg(long)]
        warmup_epochs: Option<f64>,
        #[arg(long, default_value_t = 0.0)]
        label_smoothing: f32,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Use only the first N training images (quick runs).
        #[arg(long, value_parser = at_least_one)]
        limit: Option<usize>,
        /// Random shifts (±2 px), rotations (±10°) and scaling (±10%); never flips.
        #[arg(long)]
        augment: bool,
        /// Where to write the weights (after every epoch); the checkpoint goes to OUT.ckpt/.
        #[arg(long, default_value = "vit.safetensors")]
        out: PathBuf,
        /// Continue from OUT.ckpt/ (model, optimiser, data order) to --epochs in total.
        #[arg(long)]
        resume: bool,
        /// Start from these weights instead of a fresh model (fine-tuning): a new optimiser
        /// and schedule; the architecture comes from the file, `--dropout` may change.
        #[arg(
            long,
            value_name = "WEIGHTS",
            conflicts_with_all = ["resume", "preset", "patch_size", "dim", "depth", "heads", "mlp_dim"]
        )]
        init_from: Option<PathBuf>,
        /// Also keep the weights of each of the last N epochs, as OUT with `.epochE` before
        /// its extension (for `vit average`).
        #[arg(long, default_value_t = 0)]
        keep_last: usize,
        #[command(flatten)]
        common: Common,
    }

    pub fn main() -> ExitCode {
        let cli = Cli::parse();
        let result =
            start_process(cli.command.common()).and_then(|()| on_pool(|| run(cli.command)));
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("error: {message}");
                ExitCode::FAILURE
            }
        }
    }

    impl Command {
        fn common(&self) -> Option<&Common> {
            match self {
                Command::PrepareData { .. } | Command::Average { .. } => None,
                Command::Eval { common, .. } | Command::Bench { common, .. } => Some(common),
                Command::Train(args) => Some(&args.common),
            }
        }
    }

    /// What must be set before any other thread exists: the allocator, Burn's default device
    /// (checkpoints load their tensors onto it, and with the `gpu` feature it would be the GPU
    /// even for a CPU run) and the size of the CPU thread pool.
    fn start_process(common: Option<&Common>) -> Result<(), String> {
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
            Some(threads) => native::set_threads(threads),
            None => Ok(()),
        }
    }

    /// Runs `work` on a worker of the CPU pool rather than on the main thread. Burn's CPU
    /// kernels then split work from inside the pool instead of handing every operation to a
    /// pool thread and sleeping until it is done: on this VM, waking a thread on an idle core
    /// per operation made batch-1 inference 1.4 ms instead of 0.5 ms.
    fn on_pool<T: Send>(work: impl FnOnce() -> T + Send) -> T {
        let mut result = None;
        rayon::scope(|_| result = Some(work()));
        result.expect("the scope ran the work")
    }

    fn run(command: Command) -> Result<(), String> {
        match command {
            Command::PrepareData {
                idx,
                out,
                chunk_items,
            } => prepare_data(idx, out, chunk_items),
            Command::Average { out, weights } => average(out, weights),
            Command::Eval {
                weights,
                json,
                common,
            } => eval(weights, json, common),
            Command::Train(args) => train(*args),
            Command::Bench {
                steps,
                batch_size,
                inferences,
                preset,
                common,
            } => bench(steps, batch_size, inferences, &preset, common),
        }
    }

    fn prepare_data(idx: PathBuf, out: PathBuf, chunk_items: usize) -> Result<(), String> {
        if chunk_items == 0 {
            return Err("--chunk-items must be at least 1".into());
        }
        let train = vitlab::data::idx::read_split(&idx, Split::Train)?;
        let test = vitlab::data::idx::read_split(&idx, Split::Test)?;
        let manifest = native::write_chunks(&out, &train, &test, chunk_items)?;
        let bytes: usize = manifest
            .train
            .iter()
            .chain(&manifest.test)
            .map(|c| c.bytes)
            .sum();
        println!(
            "wrote {} train and {} test chunks ({} + {} images, {:.1} MB) to {}",
            manifest.train.len(),
            manifest.test.len(),
            train.len(),
            test.len(),
            bytes as f64 / 1e6,
            out.display()
        );
        Ok(())
    }

    /// The data folder and the compute device.
    fn setup(common: &Common) -> Result<(PathBuf, Device), String> {
        let device = match common.device {
            DeviceChoice::Cpu => Device::flex(),
            #[cfg(feature = "gpu")]
            DeviceChoice::Gpu => Device::wgpu(burn::tensor::DeviceKind::DefaultDevice),
            #[cfg(not(feature = "gpu"))]
            DeviceChoice::Gpu => {
                return Err("this `vit` was built without GPU support; build it with \
                     `cargo build --release --features gpu --bin vit`"
                    .into());
            }
        };
        let data = common.data.clone().unwrap_or_else(native::default_data_dir);
        Ok((data, device))
    }

    /// A weights file, read and checked; errors name the file.
    fn read_weights(path: &Path) -> Result<WeightsFile, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        weights::decode_within(&bytes, &Budget::CLI).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn average(out: PathBuf, paths: Vec<PathBuf>) -> Result<(), String> {
        let files = paths
            .iter()
            .map(|path| read_weights(path))
            .collect::<Result<Vec<_>, String>>()?;
        let averaged = weights::average(&files)?;
        write_atomically(&out, &weights::encode(&averaged.config, &averaged.tensors))?;
        println!(
            "the mean of {} files written to {}",
            files.len(),
            out.display()
        );
        Ok(())
    }

    fn eval(path: PathBuf, json: bool, common: Common) -> Result<(), String> {
        let (data_dir, device) = setup(&common)?;
        let file = read_weights(&path)?;
        check_eval_batch(&file.config, &common)?;
        let (model, config) = (file.into_model(&device), file.config);
        let test = native::load_split(&data_dir, Split::Test)?;
        let started = Instant::now();
        let evaluation = native::evaluate(
            &model,
            &test,
            common.eval_batch_size,
            config.num_classes,
            &device,
        );
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "test accuracy {:.2}% ({} / {}) in {seconds:.1} s",
            100.0 * evaluation.accuracy(),
            evaluation.correct,
            evaluation.examples
        );
        for (class, accuracy) in evaluation.per_class_accuracy().iter().enumerate() {
            println!("  digit {class}: {:.2}%", 100.0 * accuracy);
        }
        if json {
            let summary = serde_json::json!({
                "weights": path.display().to_string(),
                "test_accuracy": evaluation.accuracy(),
                "correct": evaluation.correct,
                "examples": evaluation.examples,
                "per_class_accuracy": evaluation.per_class_accuracy(),
                "confusion": evaluation.confusion,
                "config": config,
                "parameters": config.num_params(),
                "seconds": seconds,
            });
            println!("{summary}");
        }
        Ok(())
    }

    fn model_config(args: &TrainArgs) -> Result<VitConfig, String> {
        let mut config = VitConfig::preset(&args.preset)
            .ok_or_else(|| format!("unknown preset `{}` (seed, lab)", args.preset))?;
        if let Some(v) = args.patch_size {
            config.patch_size = v;
        }
        if let Some(v) = args.dim {
            config.dim = v;
        }
        if let Some(v) = args.depth {
            config.depth = v;
        }
        if let Some(v) = args.heads {
            config.heads = v;
        }
        if let Some(v) = args.mlp_dim {
            config.mlp_dim = v;
        }
        if let Some(v) = args.dropout {
            config.dropout = v;
        }
        config.validate().map_err(|e| e.to_string())?;
        Ok(config)
    }

    /// The weights `--init-from` starts from, with `--dropout` applied to their config.
    fn initial_weights(path: &Path, dropout: Option<f64>) -> Result<WeightsFile, String> {
        let mut file = read_weights(path)?;
        if let Some(dropout) = dropout {
            file.config.dropout = dropout;
        }
        file.config.validate().map_err(|e| e.to_string())?;
        Ok(file)
    }

    /// Refuses a model whose evaluation batches `vit` cannot afford.
    fn check_eval_batch(config: &VitConfig, common: &Common) -> Result<(), String> {
        let batch = common.eval_batch_size;
        config
            .check_budget(&Budget::CLI, Some(batch))
            .map(|_| ())
            .map_err(|e| format!("{e} (at --eval-batch-size {batch})"))
    }

    /// What `--resume` needs besides the model and optimiser bytes.
    #[derive(serde::Serialize, serde::Deserialize)]
    struct TrainState {
        config: VitConfig,
        epochs_done: usize,
        step: usize,
        shuffle_rng: u64,
        augment_rng: u64,
        /// Test accuracy after each epoch.
        history: Vec<f64>,
        seconds: f64,
        /// The options of the latest run on this checkpoint (absent in older checkpoints).
        #[serde(default)]
        plan: Option<TrainingPlan>,
    }

    /// The training options `resumed` changes from `saved`, as "name old → new".
    fn changed_options(saved: &TrainingPlan, resumed: &TrainingPlan) -> Vec<String> {
        type Value = fn(&TrainingPlan) -> String;
        let options: [(&str, Value); 8] = [
            ("--epochs", |plan| plan.epochs.to_string()),
            ("--batch-size", |plan| plan.batch_size.to_string()),
            ("--lr", |plan| plan.lr.to_string()),
            ("--warmup-epochs", |plan| {
                format!("{:?}", plan.warmup_epochs)
            }),
            ("--weight-decay", |plan| plan.weight_decay.to_string()),
            ("--label-smoothing", |plan| plan.label_smoothing.to_string()),
            ("--augment", |plan| plan.augment.to_string()),
            ("--seed", |plan| plan.seed.to_string()),
        ];
        options
            .into_iter()
            .filter_map(|(name, value)| {
                let (old, new) = (value(saved), value(resumed));
                (old != new).then(|| format!("{name} {old} → {new}"))
            })
            .collect()
    }

    /// The model options given with `--resume` that differ from the checkpoint's model.
    fn ignored_model_options(args: &TrainArgs, saved: &VitConfig) -> Vec<String> {
        let sizes = [
            ("--patch-size", args.patch_size, saved.patch_size),
            ("--dim", args.dim, saved.dim),
            ("--depth", args.depth, saved.depth),
            ("--heads", args.heads, saved.heads),
            ("--mlp-dim", args.mlp_dim, saved.mlp_dim),
        ];
        let mut ignored: Vec<String> = sizes
            .into_iter()
            .filter_map(|(name, given, kept)| {
                given
                    .filter(|&given| given != kept)
                    .map(|given| format!("{name} {given} (the model has {kept})"))
            })
            .collect();
        if let Some(dropout) = args.dropout.filter(|&dropout| dropout != saved.dropout) {
            ignored.push(format!(
                "--dropout {dropout} (the model has {})",
                saved.dropout
            ));
        }
        ignored
    }

    fn checkpoint_dir(out: &Path) -> PathBuf {
        let mut name = out.as_os_str().to_owned();
        name.push(".ckpt");
        PathBuf::from(name)
    }

    /// `vit.safetensors` after epoch 7: `vit.epoch7.safetensors`.
    fn epoch_path(out: &Path, epoch: usize) -> PathBuf {
        let stem = out.file_stem().unwrap_or_default().to_string_lossy();
        let name = match out.extension() {
            Some(extension) => format!("{stem}.epoch{epoch}.{}", extension.to_string_lossy()),
            None => format!("{stem}.epoch{epoch}"),
        };
        out.with_file_name(name)
    }

    /// Writes via a temporary file and a rename, so an interrupted write never leaves a
    /// half-written file where the last good one was.
    fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
        let mut temporary = path.as_os_str().to_owned();
        temporary.push(".partial");
        std::fs::write(&temporary, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        std::fs::rename(&temporary, path).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn save_checkpoint(dir: &Path, trainer: &Trainer, state: &TrainState) -> Result<(), String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let checkpoint = trainer.checkpoint()?;
        write_atomically(&dir.join("model.bpk"), &checkpoint.model)?;
        write_atomically(&dir.join("optimizer.bpk"), &checkpoint.optimizer)?;
        let json = serde_json::to_string_pretty(state).expect("the state serialises");
        write_atomically(&dir.join("state.json"), json.as_bytes())
    }

    fn load_checkpoint(
        dir: &Path,
        settings: OptimizerSettings,
        device: &Device,
    ) -> Result<(Trainer, TrainState), String> {
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| format!("{}: {e}", dir.join(name).display()))
        };
        let state: TrainState = serde_json::from_slice(&read("state.json")?)
            .map_err(|e| format!("{}: {e}", dir.join("state.json").display()))?;
        // Before anything of the model's size is built: the file may be damaged or hostile.
        let refused = |why: String| format!("{}: the checkpoint's model: {why}", dir.display());
        state
            .config
            .validate()
            .map_err(|e| refused(e.to_string()))?;
        state
            .config
            .check_budget(&Budget::CLI, None)
            .map_err(|e| refused(e.to_string()))?;
        // Counters past any real run would wrap the loops and sums that use them.
        let most_steps = TrainingPlan::MAX_EPOCHS * TrainingPlan::MAX_BATCH;
        if state.epochs_done > TrainingPlan::MAX_EPOCHS
            || state.step > most_steps
            || !(state.seconds.is_finite() && state.seconds >= 0.0)
        {
            return Err(format!(
                "{}: the checkpoint's counters are out of range (epoch {}, step {}, {} s)",
                dir.display(),
                state.epochs_done,
                state.step,
                state.seconds
            ));
        }
        let checkpoint = Checkpoint {
            model: read("model.bpk")?,
            optimizer: read("optimizer.bpk")?,
            step: state.step,
        };
        let trainer = Trainer::resume(&checkpoint, state.config.clone(), settings, device)?;
        Ok((trainer, state))
    }

    /// A count that must be at least 1 (a batch of 0 images would never end an epoch).
    fn at_least_one(text: &str) -> Result<usize, String> {
        match text.parse::<usize>() {
            Ok(0) => Err("must be at least 1".into()),
            Ok(count) => Ok(count),
            Err(error) => Err(error.to_string()),
        }
    }

    fn progress_line(
        epoch: usize,
        epochs: usize,
        done: usize,
        total: usize,
        loss: f64,
        accuracy: f64,
        rate: f64,
    ) -> String {
        const WIDTH: usize = 24;
        let filled = WIDTH * done / total.max(1);
        let left = (total - done) as f64 / rate.max(1e-9);
        format!(
            "epoch {epoch}/{epochs} [{}{}] {done}/{total} loss {loss:.4} acc {:.2}% {rate:.0} img/s {:.0}s left",
            "#".repeat(filled),
            "-".repeat(WIDTH - filled),
            100.0 * accuracy,
            left
        )
    }

    fn train(args: TrainArgs) -> Result<(), String> {
        let (data_dir, device) = setup(&args.common)?;
        let mut train_set = native::load_split(&data_dir, Split::Train)?;
        if let Some(limit) = args.limit {
            train_set = train_set.slice(0..limit.min(train_set.len()));
        }
        let test_set = native::load_split(&data_dir, Split::Test)?;
        seed_randomness(&device, args.seed);
        // The page's plan type, so the schedule and optimiser are made in one place.
        let mut plan = TrainingPlan {
            config: model_config(&args)?,
            epochs: args.epochs,
            batch_size: args.batch_size,
            lr: args.lr,
            warmup_epochs: args.warmup_epochs,
            weight_decay: args.weight_decay,
            label_smoothing: args.label_smoothing,
            augment: args.augment,
            seed: args.seed,
            eval_images: test_set.len(),
            eval_every: 0,
        };
        // The page's checks too: a rate or smoothing it would refuse is refused here.
        plan.validate_within(&Budget::CLI)?;
        let settings = plan.optimizer();
        let ckpt = checkpoint_dir(&args.out);
        let (mut trainer, mut state) = if args.resume {
            let (trainer, mut state) = load_checkpoint(&ckpt, settings, &device)?;
            println!(
                "resuming after epoch {} (step {}) from {}",
                state.epochs_done,
                state.step,
                ckpt.display()
            );
            // Allowed (a longer --epochs restarts the schedule warm), but never silent.
            let changes = state
                .plan
                .as_ref()
                .map(|saved| changed_options(saved, &plan))
                .unwrap_or_default();
            if !changes.is_empty() {
                println!(
                    "options changed since the checkpoint's run: {}",
                    changes.join(", ")
                );
            }
            let ignored = ignored_model_options(&args, &state.config);
            if !ignored.is_empty() {
                println!(
                    "the checkpoint's model is kept, so these are ignored: {}",
                    ignored.join(", ")
                );
            }
            plan.config = state.config.clone();
            state.plan = Some(plan.clone());
            (trainer, state)
        } else {
            let (model, config) = match &args.init_from {
                Some(path) => {
                    let file = initial_weights(path, args.dropout)?;
                    println!("starting from the weights in {}", path.display());
                    (file.into_model(&device), file.config)
                }
                None => (plan.config.init(&device), plan.config.clone()),
            };
            plan.config = config.clone();
            let trainer = Trainer::new(model, config.clone(), settings, &device);
            let state = TrainState {
                config,
                epochs_done: 0,
                step: 0,
                shuffle_rng: args.seed,
                augment_rng: SplitMix64::for_augmentation(args.seed).state(),
                history: Vec::new(),
                seconds: 0.0,
                plan: Some(plan.clone()),
            };
            (trainer, state)
        };
        // The model may now be the checkpoint's or the file's: its batches are checked again.
        plan.validate_within(&Budget::CLI)?;
        check_eval_batch(&plan.config, &args.common)?;
        trainer.seed = args.seed;
        let config = state.config.clone();
        let steps_per_epoch = train_set.len().div_ceil(args.batch_size);
        let schedule = plan.schedule(train_set.len());
        let augmentation = args.augment.then(Augmentation::default);
        println!(
            "training {} parameters ({:?}) on {} images, {steps_per_epoch} steps per epoch, on the {}, augmentation {}",
            config.num_params(),
            config,
            train_set.len(),
            match args.common.device {
                DeviceChoice::Cpu => match rayon::current_num_threads() {
                    1 => "CPU (1 thread)".to_string(),
                    threads => format!("CPU ({threads} threads)"),
                },
                DeviceChoice::Gpu => "GPU (wgpu)".to_string(),
            },
            if augmentation.is_some() { "on" } else { "off" }
        );

        let interrupted = Arc::new(AtomicBool::new(false));
        {
            let interrupted = interrupted.clone();
            ctrlc::set_handler(move || interrupted.store(true, Ordering::SeqCst))
                .map_err(|e| format!("installing the Ctrl-C handler: {e}"))?;
        }
        let interactive = std::io::stderr().is_terminal();
        let mut shuffle_rng = SplitMix64::new(state.shuffle_rng);
        let mut augment_rng = SplitMix64::new(state.augment_rng);
        let mut order: Vec<usize> = (0..train_set.len()).collect();
        let last_checkpoint = |epoch: usize| match epoch - 1 {
            0 => "no epoch had ended, so there is no checkpoint to resume".to_string(),
            done => format!(
                "the checkpoint after epoch {done} is in {} (continue with --resume)",
                ckpt.display()
            ),
        };
        for epoch in state.epochs_done + 1..=args.epochs {
            order.sort_unstable();
            shuffle_rng.shuffle(&mut order);
            let started = Instant::now();
            let (mut loss_sum, mut correct, mut seen) = (0.0f64, 0usize, 0usize);
            for (index, indices) in order.chunks(args.batch_size).enumerate() {
                if interrupted.load(Ordering::SeqCst) {
                    eprintln!();
                    return Err(format!(
                        "interrupted in epoch {epoch}; {}",
                        last_checkpoint(epoch)
                    ));
                }
                let batch = match &augmentation {
                    Some(augmentation) => train_set.augmented_batch(
                        indices,
                        augmentation,
                        &mut augment_rng,
                        trainer.device(),
                    ),
                    None => train_set.batch(indices, trainer.device()),
                };
                let lr = schedule.at(trainer.step);
                let output = trainer.step(&batch, lr);
                let loss = output.loss.into_scalar::<f32>() as f64;
                if !loss.is_finite() {
                    return Err(format!(
                        "the loss became {loss} at step {}; lower --lr ({})",
                        trainer.step,
                        last_checkpoint(epoch)
                    ));
                }
                loss_sum += loss * indices.len() as f64;
                correct += output.correct.into_scalar::<i64>() as usize;
                seen += indices.len();
                let line = || {
                    let rate = seen as f64 / started.elapsed().as_secs_f64();
                    progress_line(
                        epoch,
                        args.epochs,
                        seen,
                        train_set.len(),
                        loss_sum / seen as f64,
                        correct as f64 / seen as f64,
                        rate,
                    )
                };
                if interactive {
                    eprint!("\r{}", line());
                } else if (index + 1) % 100 == 0 {
                    println!("{}", line());
                }
            }
            if interactive {
                eprintln!();
            }
            let train_seconds = started.elapsed().as_secs_f64();
            let model = trainer.inference_model();
            let evaluation = native::evaluate(
                &model,
                &test_set,
                args.common.eval_batch_size,
                config.num_classes,
                &device,
            );
            state.history.push(evaluation.accuracy());
            state.epochs_done = epoch;
            state.step = trainer.step;
            state.shuffle_rng = shuffle_rng.state();
            state.augment_rng = augment_rng.state();
            state.seconds += started.elapsed().as_secs_f64();
            println!(
                "epoch {epoch}: train loss {:.4}, train acc {:.2}%, test acc {:.2}%, {:.0} img/s, {:.1} s",
                loss_sum / seen as f64,
                100.0 * correct as f64 / seen as f64,
                100.0 * evaluation.accuracy(),
                seen as f64 / train_seconds,
                started.elapsed().as_secs_f64()
            );
            let bytes = weights::to_safetensors(&model, &config);
            if epoch + args.keep_last > args.epochs {
                write_atomically(&epoch_path(&args.out, epoch), &bytes)?;
            }
            write_atomically(&args.out, &bytes)?;
            save_checkpoint(&ckpt, &trainer, &state)?;
        }
        println!(
            "weights written to {} ({:.0} s of training)",
            args.out.display(),
            state.seconds
        );
        Ok(())
    }

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

    fn bench(
        steps: usize,
        batch_size: usize,
        inferences: usize,
        preset: &str,
        common: Common,
    ) -> Result<(), String> {
        const WARMUP: usize = 5;
        let batch = batch_size;
        let (data_dir, device) = setup(&common)?;
        let threads = common.threads.unwrap_or_else(rayon::current_num_threads);
        let manifest = native::read_manifest(&data_dir)?;
        let set = native::load_chunk(&data_dir, &manifest.train[0])?;
        let config =
            VitConfig::preset(preset).ok_or_else(|| format!("unknown preset `{preset}`"))?;
        if batch == 0 || batch > set.len() || steps == 0 || inferences == 0 {
            return Err(format!(
                "--batch-size must be 1 to {} (the images of the first training chunk), \
                 --steps and --inferences at least 1",
                set.len()
            ));
        }
        config
            .check_budget(&Budget::CLI, Some(batch))
            .map_err(|e| e.to_string())?;
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
                return Err("the loss is not finite".into());
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
        let launches = count_gpu_launches(&common, &set, &mut trainer, &model, &batches[0])?;
        let summary = serde_json::json!({
            "implementation": match common.device {
                DeviceChoice::Cpu => "vitlab (Burn, flex CPU backend)",
                DeviceChoice::Gpu => "vitlab (Burn, wgpu)",
            },
            "preset": preset,
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
        model: &vitlab::model::VisionTransformer,
        indices: &[usize],
    ) -> Result<Option<(Launches, Launches)>, String> {
        if common.device != DeviceChoice::Gpu {
            return Ok(None);
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
        let images = vitlab::inference::images_of(set, 1);
        let (_, inference) = count_launches(|| {
            let pending = vitlab::inference::classify(model, &images, &device);
            let _ = pending.packed.into_data();
        });
        Ok(Some((step, inference)))
    }

    #[cfg(not(feature = "gpu"))]
    fn count_gpu_launches(
        _: &Common,
        _: &vitlab::data::MnistSet,
        _: &mut Trainer,
        _: &vitlab::model::VisionTransformer,
        _: &[usize],
    ) -> Result<Option<(Launches, Launches)>, String> {
        Ok(None)
    }
}
