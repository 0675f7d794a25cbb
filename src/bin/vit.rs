//! `vit`: the native command line. Prepares the chunked data, trains, evaluates.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use std::path::PathBuf;
    use std::process::ExitCode;
    use std::time::Instant;

    use burn::tensor::Device;
    use clap::{Args, Parser, Subcommand};
    use vitlab::data::Split;
    use vitlab::model::VitConfig;
    use vitlab::native;
    use vitlab::train::{LrSchedule, OptimizerSettings, SplitMix64, Trainer};
    use vitlab::weights;

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
        Train(TrainArgs),
    }

    #[derive(Args)]
    struct Common {
        /// Folder with manifest.json and the chunks.
        #[arg(long)]
        data: Option<PathBuf>,
        /// CPU threads (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Images per evaluation batch.
        #[arg(long, default_value_t = 500)]
        eval_batch_size: usize,
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
        #[arg(long, default_value_t = 10)]
        epochs: usize,
        #[arg(long, default_value_t = 64)]
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
        #[arg(long)]
        limit: Option<usize>,
        /// Where to write the weights (after every epoch).
        #[arg(long, default_value = "vit.safetensors")]
        out: PathBuf,
        #[command(flatten)]
        common: Common,
    }

    pub fn main() -> ExitCode {
        let cli = Cli::parse();
        let result = match cli.command {
            Command::PrepareData {
                idx,
                out,
                chunk_items,
            } => prepare_data(idx, out, chunk_items),
            Command::Eval {
                weights,
                json,
                common,
            } => eval(weights, json, common),
            Command::Train(args) => train(args),
        };
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("error: {message}");
                ExitCode::FAILURE
            }
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

    fn setup(common: &Common) -> Result<PathBuf, String> {
        if let Some(threads) = common.threads {
            native::set_threads(threads)?;
        }
        Ok(common.data.clone().unwrap_or_else(native::default_data_dir))
    }

    fn eval(path: PathBuf, json: bool, common: Common) -> Result<(), String> {
        let data_dir = setup(&common)?;
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let device = Device::flex();
        let (model, config) =
            weights::load(&bytes, &device).map_err(|e| format!("{}: {e}", path.display()))?;
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

    fn train(args: TrainArgs) -> Result<(), String> {
        let data_dir = setup(&args.common)?;
        let config = model_config(&args)?;
        if args.batch_size == 0 || args.epochs == 0 {
            return Err("--batch-size and --epochs must be at least 1".into());
        }
        let mut train_set = native::load_split(&data_dir, Split::Train)?;
        if let Some(limit) = args.limit {
            train_set = train_set.slice(0..limit.min(train_set.len()));
        }
        let test_set = native::load_split(&data_dir, Split::Test)?;
        let device = Device::flex();
        device.seed(args.seed);
        let settings = OptimizerSettings {
            weight_decay: args.weight_decay,
            label_smoothing: args.label_smoothing,
        };
        let mut trainer = Trainer::new(config.init(&device), config.clone(), settings, &device);
        let steps_per_epoch = train_set.len().div_ceil(args.batch_size);
        let schedule = match args.warmup_epochs {
            Some(warmup) => LrSchedule {
                peak: args.lr,
                floor: args.lr * 1e-2,
                warmup_steps: (warmup * steps_per_epoch as f64) as usize,
                total_steps: args.epochs * steps_per_epoch,
            },
            None => LrSchedule::constant(args.lr),
        };
        println!(
            "training {} parameters ({:?}) on {} images, {} steps per epoch",
            config.num_params(),
            config,
            train_set.len(),
            steps_per_epoch
        );
        let mut rng = SplitMix64::new(args.seed);
        let mut order: Vec<usize> = (0..train_set.len()).collect();
        for epoch in 1..=args.epochs {
            rng.shuffle(&mut order);
            let started = Instant::now();
            let (mut loss_sum, mut correct, mut seen) = (0.0f64, 0usize, 0usize);
            for (index, indices) in order.chunks(args.batch_size).enumerate() {
                let batch = train_set.batch(indices, trainer.device());
                let lr = schedule.at(trainer.step);
                let output = trainer.step(&batch, lr);
                let loss = output.loss.into_scalar::<f32>() as f64;
                if !loss.is_finite() {
                    return Err(format!("the loss became {loss} at step {}", trainer.step));
                }
                loss_sum += loss * indices.len() as f64;
                correct += output.correct.into_scalar::<i64>() as usize;
                seen += indices.len();
                if (index + 1) % 100 == 0 || index + 1 == steps_per_epoch {
                    let rate = seen as f64 / started.elapsed().as_secs_f64();
                    let left = (train_set.len() - seen) as f64 / rate;
                    println!(
                        "epoch {epoch} step {}/{steps_per_epoch} loss {:.4} acc {:.2}% lr {lr:.2e} {rate:.0} img/s {left:.0} s left",
                        index + 1,
                        loss_sum / seen as f64,
                        100.0 * correct as f64 / seen as f64
                    );
                }
            }
            let model = trainer.inference_model();
            let evaluation = native::evaluate(
                &model,
                &test_set,
                args.common.eval_batch_size,
                config.num_classes,
                &device,
            );
            println!(
                "epoch {epoch}: train loss {:.4}, train acc {:.2}%, test acc {:.2}%, {:.1} s",
                loss_sum / seen as f64,
                100.0 * correct as f64 / seen as f64,
                100.0 * evaluation.accuracy(),
                started.elapsed().as_secs_f64()
            );
            let bytes = weights::to_safetensors(&model, &config);
            std::fs::write(&args.out, bytes).map_err(|e| format!("{}: {e}", args.out.display()))?;
        }
        println!("weights written to {}", args.out.display());
        Ok(())
    }
}
