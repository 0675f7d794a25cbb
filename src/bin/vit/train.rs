//! `vit train`: the page's training session (`train::Session`), driven from the command
//! line: the same batches, schedule, augmentation, evaluation and checkpoint format.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use burn::tensor::Device;
use vitlab::data::Split;
use vitlab::model::{Budget, VitConfig};
use vitlab::native;
use vitlab::train::{Checkpoint, Session, TrainingError, TrainingPlan, classify_in_batches};
use vitlab::weights::{self, WeightsFile};

use crate::args::{DeviceChoice, TrainArgs};
use crate::eval::check_eval_batch;
use crate::files::{epoch_path, read_weights, write_atomically};
use crate::setup;

fn model_config(args: &TrainArgs) -> Result<VitConfig, String> {
    let mut config = VitConfig::preset(args.preset);
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

pub fn train(args: TrainArgs) -> Result<(), String> {
    let (data_dir, device) = setup(&args.common)?;
    let mut train_set = native::load_split(&data_dir, Split::Train).map_err(|e| e.to_string())?;
    if let Some(limit) = args.limit {
        train_set = train_set.slice(0..limit.min(train_set.len()));
    }
    let test_set = native::load_split(&data_dir, Split::Test).map_err(|e| e.to_string())?;
    // The page's plan type: the schedule, optimiser and checks are made in one place.
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
        // The whole test split, after every epoch.
        eval_images: test_set.len(),
        eval_every: 0,
    };
    plan.validate_within(&Budget::CLI)
        .map_err(|e| e.to_string())?;
    let ckpt = checkpoint_path(&args.out);
    let resume_from = args
        .resume_from
        .clone()
        .or_else(|| args.resume.then(|| ckpt.clone()));
    let mut session = match &resume_from {
        Some(path) => resumed(path, &args, plan, train_set.len(), &device)?,
        None => {
            if let Some(path) = &args.init_from {
                let file = initial_weights(path, args.dropout)?;
                println!("starting from the weights in {}", path.display());
                plan.config = file.config.clone();
                // The file's model has its own batches to check.
                plan.validate_within(&Budget::CLI)
                    .map_err(|e| e.to_string())?;
                Session::from_model(plan, train_set.len(), file.into_model(&device), &device)
                    .map_err(|e| e.to_string())?
            } else {
                Session::new_within(plan, train_set.len(), &device, &Budget::CLI)
                    .map_err(|e| e.to_string())?
            }
        }
    };
    check_eval_batch(&session.plan.config, &args.common)?;
    session.add_train(&train_set);
    session.add_test(&test_set);
    // Every image is here: a resumed pass may not wait for any more.
    session.data_complete();
    let config = session.plan.config.clone();
    println!(
        "training {} parameters ({:?}) on {} images, {} steps per epoch, on the {}, augmentation {}",
        config.num_params(),
        config,
        train_set.len(),
        session.steps_per_epoch(),
        match args.common.device {
            DeviceChoice::Cpu => match rayon::current_num_threads() {
                1 => "CPU (1 thread)".to_string(),
                threads => format!("CPU ({threads} threads)"),
            },
            DeviceChoice::Gpu => "GPU (wgpu)".to_string(),
        },
        if session.plan.augment { "on" } else { "off" }
    );
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let interrupted = interrupted.clone();
        ctrlc::set_handler(move || interrupted.store(true, Ordering::SeqCst))
            .map_err(|e| format!("installing the Ctrl-C handler: {e}"))?;
    }
    let interactive = std::io::stderr().is_terminal();
    let steps_per_epoch = session.steps_per_epoch();
    let last_checkpoint = |epoch: usize| match epoch - 1 {
        0 if resume_from.is_none() => {
            "no epoch had ended, so there is no checkpoint to resume".to_string()
        }
        _ => format!(
            "the checkpoint of the last epoch is in {} (continue with --resume)",
            ckpt.display()
        ),
    };
    let mut epoch = Epoch::starting(session.step() / steps_per_epoch + 1);
    while !session.is_finished() {
        if interrupted.load(Ordering::SeqCst) {
            eprintln!();
            return Err(format!(
                "interrupted in epoch {}; {}",
                epoch.number,
                last_checkpoint(epoch.number)
            ));
        }
        let began = Instant::now();
        let pending = session.begin_step().expect("every image is loaded");
        let loss = pending.loss.clone().into_scalar::<f32>();
        let correct = pending.correct.clone().into_scalar::<i64>();
        let seconds = began.elapsed().as_secs_f64();
        if let Err(TrainingError::NonFiniteLoss { step, loss }) =
            session.finish_step(&pending, loss, correct, seconds)
        {
            return Err(format!(
                "the loss became {loss} at step {step}; lower --lr ({})",
                last_checkpoint(epoch.number)
            ));
        }
        epoch.add(pending.images, loss, correct);
        let in_epoch = (session.step() - 1) % steps_per_epoch + 1;
        if interactive {
            eprint!(
                "\r{}",
                epoch.progress(args.epochs, in_epoch, steps_per_epoch)
            );
        } else if in_epoch % 100 == 0 {
            println!("{}", epoch.progress(args.epochs, in_epoch, steps_per_epoch));
        }
        if in_epoch == steps_per_epoch || session.is_finished() {
            if interactive {
                eprintln!();
            }
            let train_seconds = epoch.started.elapsed().as_secs_f64();
            let accuracy = evaluate(&mut session, args.common.eval_batch_size);
            println!(
                "epoch {}: train loss {:.4}, train acc {:.2}%, test acc {:.2}%, {:.0} img/s, {:.1} s",
                epoch.number,
                epoch.loss_sum / epoch.seen as f64,
                100.0 * epoch.correct as f64 / epoch.seen as f64,
                100.0 * accuracy,
                epoch.seen as f64 / train_seconds,
                epoch.started.elapsed().as_secs_f64()
            );
            let checkpoint = session.checkpoint();
            let weights = weights::encode(&config, &checkpoint.weights.tensors);
            if epoch.number + args.keep_last > args.epochs {
                write_atomically(&epoch_path(&args.out, epoch.number), &weights)?;
            }
            write_atomically(&args.out, &weights)?;
            write_atomically(&ckpt, &checkpoint.encode())?;
            epoch = Epoch::starting(epoch.number + 1);
        }
    }
    println!(
        "weights written to {} ({:.0} s of training)",
        args.out.display(),
        session.state().seconds
    );
    Ok(())
}

/// The run in a checkpoint, continued with this command line's options (the model's stay
/// the checkpoint's); every change is said.
fn resumed(
    path: &Path,
    args: &TrainArgs,
    mut plan: TrainingPlan,
    train_items: usize,
    device: &Device,
) -> Result<Session, String> {
    let bytes = read_checkpoint(path)?;
    let mut checkpoint =
        Checkpoint::decode(&bytes, &Budget::CLI).map_err(|e| format!("{}: {e}", path.display()))?;
    let saved = &checkpoint.state;
    let steps_per_epoch = saved.plan.steps_per_epoch(saved.train_items);
    println!(
        "resuming after epoch {} (step {}) from {}{}",
        saved.step / steps_per_epoch,
        saved.step,
        path.display(),
        if checkpoint.moments.is_some() {
            ""
        } else {
            " (its optimiser moments start afresh)"
        }
    );
    // Allowed (a longer --epochs restarts the schedule warm), but never silent.
    let mut changes = changed_options(&saved.plan, &plan);
    if saved.train_items != train_items {
        changes.push(format!(
            "training images {} → {train_items}",
            saved.train_items
        ));
    }
    if !changes.is_empty() {
        println!(
            "options changed since the checkpoint's run: {}",
            changes.join(", ")
        );
    }
    let ignored = ignored_model_options(args, &saved.plan.config);
    if !ignored.is_empty() {
        println!(
            "the checkpoint's model is kept, so these are ignored: {}",
            ignored.join(", ")
        );
    }
    plan.config = saved.plan.config.clone();
    plan.validate_within(&Budget::CLI)
        .map_err(|e| e.to_string())?;
    checkpoint.state.plan = plan;
    checkpoint.state.train_items = train_items;
    Session::resume(checkpoint, device).map_err(|e| format!("{}: {e}", path.display()))
}

/// A checkpoint's bytes; a folder in its place is an older `vit`'s checkpoint.
fn read_checkpoint(path: &Path) -> Result<Vec<u8>, String> {
    if path.is_dir() {
        return Err(format!(
            "{} is a checkpoint folder of an older vit, which this one cannot resume; start afresh \
             (or continue it with that vit)",
            path.display()
        ));
    }
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Test accuracy on the plan's test images, booked in the session's history.
fn evaluate(session: &mut Session, batch_size: usize) -> f64 {
    let indices = session.evaluation_indices();
    let (model, device) = (session.inference_model(), session.device());
    let mut predicted = Vec::with_capacity(indices.len());
    for (_, batch) in classify_in_batches(&model, session.test_set(), &indices, batch_size, &device)
    {
        predicted.extend(native::read_ints(batch));
    }
    f64::from(
        session
            .finish_evaluation(&indices, &predicted)
            .point
            .accuracy,
    )
}

/// The figures of the epoch under way.
struct Epoch {
    number: usize,
    started: Instant,
    loss_sum: f64,
    correct: usize,
    seen: usize,
}

impl Epoch {
    fn starting(number: usize) -> Self {
        Self {
            number,
            started: Instant::now(),
            loss_sum: 0.0,
            correct: 0,
            seen: 0,
        }
    }

    fn add(&mut self, images: usize, loss: f32, correct: i64) {
        self.loss_sum += f64::from(loss) * images as f64;
        self.correct += correct as usize;
        self.seen += images;
    }

    /// `epoch 2/10 [######------------------] 250/938 loss 0.1234 acc 96.00% 900 img/s 80s left`
    fn progress(&self, epochs: usize, step: usize, steps: usize) -> String {
        const WIDTH: usize = 24;
        let rate = self.seen as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        let seen = self.seen.max(1) as f64;
        let filled = WIDTH * step / steps.max(1);
        let left = (steps - step) as f64 * seen / step.max(1) as f64 / rate.max(1e-9);
        format!(
            "epoch {}/{epochs} [{}{}] {step}/{steps} loss {:.4} acc {:.2}% {rate:.0} img/s {left:.0}s left",
            self.number,
            "#".repeat(filled),
            "-".repeat(WIDTH - filled),
            self.loss_sum / seen,
            100.0 * self.correct as f64 / seen,
        )
    }
}

/// `vit.safetensors` → `vit.safetensors.ckpt`.
fn checkpoint_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".ckpt");
    PathBuf::from(name)
}
