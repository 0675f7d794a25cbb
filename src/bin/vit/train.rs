//! `vit train`: the page's training session (`train::Session`), driven from the command
//! line: the same batches, schedule, augmentation, evaluation and checkpoint format.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use burn::tensor::Device;
use vitlab::data::{MnistSet, Split};
use vitlab::model::{Architecture, Budget, ModelConfig, Preset};
use vitlab::native;
use vitlab::train::{
    Checkpoint, Distillation, DistillationKind, Session, TrainingError, TrainingPlan,
    classify_in_batches,
};
use vitlab::weights::{self, WeightsFile};

use crate::args::{DeviceChoice, DistillChoice, ModelChoice, TrainArgs};
use crate::error::{CliError, LastCheckpoint};
use crate::eval::check_eval_batch;
use crate::files::{epoch_path, read_weights, write_atomically};
use crate::setup;

/// The options that shape only one architecture, as `(flag, given)`.
fn vit_options(args: &TrainArgs) -> [(&'static str, bool); 5] {
    [
        ("--patch-size", args.patch_size.is_some()),
        ("--dim", args.dim.is_some()),
        ("--depth", args.depth.is_some()),
        ("--heads", args.heads.is_some()),
        ("--mlp-dim", args.mlp_dim.is_some()),
    ]
}

fn cnn_options(args: &TrainArgs) -> [(&'static str, bool); 3] {
    [
        ("--widths", args.widths.is_some()),
        ("--kernel-size", args.kernel_size.is_some()),
        ("--hidden", args.hidden.is_some()),
    ]
}

/// The preset `--model` and `--preset` name together (`--model cnn` is the CNN preset).
fn chosen_preset(args: &TrainArgs) -> Result<Preset, CliError> {
    match (args.model, args.preset) {
        (Some(ModelChoice::Cnn), Preset::Seed | Preset::Cnn) => Ok(Preset::Cnn),
        (Some(ModelChoice::Vit), Preset::Cnn) | (Some(ModelChoice::Cnn), Preset::Lab) => {
            Err(CliError::PresetOfOtherModel {
                preset: args.preset.name(),
            })
        }
        (_, preset) => Ok(preset),
    }
}

fn model_config(args: &TrainArgs) -> Result<ModelConfig, CliError> {
    let mut config = ModelConfig::preset(chosen_preset(args)?);
    let other = match config.architecture() {
        Architecture::Vit => cnn_options(args).to_vec(),
        Architecture::Cnn => vit_options(args).to_vec(),
    };
    if let Some((flag, _)) = other.into_iter().find(|(_, given)| *given) {
        return Err(CliError::OptionOfOtherModel {
            flag,
            architecture: config.architecture().name(),
        });
    }
    if let Some(config) = config.vit_mut() {
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
    }
    if let Some(config) = config.cnn_mut() {
        if let Some(v) = &args.widths {
            config.widths = v.clone();
        }
        if let Some(v) = args.kernel_size {
            config.kernel_size = v;
        }
        if let Some(v) = args.hidden {
            config.hidden = v;
        }
    }
    if let Some(v) = args.dropout {
        config.set_dropout(v);
    }
    config.validate()?;
    Ok(config)
}

/// The weights `--init-from` starts from, with `--dropout` applied to their config.
fn initial_weights(path: &Path, dropout: Option<f64>) -> Result<WeightsFile, CliError> {
    let mut file = read_weights(path)?;
    if let Some(dropout) = dropout {
        file.config.set_dropout(dropout);
    }
    file.config.validate()?;
    Ok(file)
}

/// The training options `resumed` changes from `saved`, as "name old → new".
fn changed_options(saved: &TrainingPlan, resumed: &TrainingPlan) -> Vec<String> {
    type Value = fn(&TrainingPlan) -> String;
    let options: [(&str, Value); 9] = [
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
        ("--teacher", |plan| match plan.distillation {
            None => "none".into(),
            Some(d) => format!("{:?} T {} weight {}", d.kind, d.temperature, d.weight),
        }),
    ];
    options
        .into_iter()
        .filter_map(|(name, value)| {
            let (old, new) = (value(saved), value(resumed));
            (old != new).then(|| format!("{name} {old} → {new}"))
        })
        .collect()
}

/// Each `(flag, given, kept)` whose given size is not the model's, as "flag given (the model
/// has kept)".
fn differing(sizes: &[(&str, Option<usize>, usize)]) -> Vec<String> {
    sizes
        .iter()
        .filter_map(|&(name, given, kept)| {
            given
                .filter(|&given| given != kept)
                .map(|given| format!("{name} {given} (the model has {kept})"))
        })
        .collect()
}

/// The model options given with `--resume` that differ from the checkpoint's model.
fn ignored_model_options(args: &TrainArgs, saved: &ModelConfig) -> Vec<String> {
    let mut ignored: Vec<String> = match saved {
        ModelConfig::Vit(saved) => differing(&[
            ("--patch-size", args.patch_size, saved.patch_size),
            ("--dim", args.dim, saved.dim),
            ("--depth", args.depth, saved.depth),
            ("--heads", args.heads, saved.heads),
            ("--mlp-dim", args.mlp_dim, saved.mlp_dim),
        ]),
        ModelConfig::Cnn { cnn: saved } => {
            let mut ignored = differing(&[
                ("--kernel-size", args.kernel_size, saved.kernel_size),
                ("--hidden", args.hidden, saved.hidden),
            ]);
            if let Some(widths) = args.widths.as_ref().filter(|&w| *w != saved.widths) {
                ignored.push(format!(
                    "--widths {widths:?} (the model has {:?})",
                    saved.widths
                ));
            }
            ignored
        }
    };
    let asked = args.model.map(|model| match model {
        ModelChoice::Vit => Architecture::Vit,
        ModelChoice::Cnn => Architecture::Cnn,
    });
    if asked.is_some_and(|asked| asked != saved.architecture()) {
        ignored.push(format!(
            "--model (the checkpoint's model is a {})",
            saved.architecture().name()
        ));
    }
    if let Some(dropout) = args.dropout.filter(|&dropout| dropout != saved.dropout()) {
        ignored.push(format!(
            "--dropout {dropout} (the model has {})",
            saved.dropout()
        ));
    }
    ignored
}

/// The training images with `--extra-copies` copies of the person's set in `--extra` after
/// the first `--limit` MNIST images; the MNIST images alone without `--extra`.
fn with_extra(train: MnistSet, args: &TrainArgs) -> Result<MnistSet, CliError> {
    let Some(dir) = &args.extra else {
        return Ok(train);
    };
    let personal = native::load_personal(dir)?.to_set();
    let mnist = args
        .limit
        .map_or(train.len(), |limit| limit.min(train.len()));
    let copies = args.extra_copies;
    let total = personal
        .len()
        .checked_mul(copies)
        .and_then(|n| n.checked_add(mnist))
        .filter(|&n| n <= MAX_MIXED_IMAGES)
        .ok_or(CliError::ExtraTooLarge {
            copies,
            digits: personal.len(),
        })?;
    let mut mixed = train.slice(0..mnist);
    for _ in 0..copies {
        mixed.extend(&personal);
    }
    println!(
        "the mix: {mnist} MNIST images and {copies} × {} of {} ({total} in all)",
        personal.len(),
        dir.display()
    );
    Ok(mixed)
}

/// The most images a mix with a person's set trains on: MNIST's 60,000 and as many again.
const MAX_MIXED_IMAGES: usize = 120_000;

pub fn train(args: TrainArgs) -> Result<(), CliError> {
    let (data_dir, device) = setup(&args.common)?;
    let (train_set, scored) = if args.val > 0 {
        native::load_train_and_validation(&data_dir, args.val)?
    } else {
        let train = native::load_split(&data_dir, Split::Train)?;
        let test = native::load_split(&data_dir, Split::Test)?;
        (train, test)
    };
    let train_set = with_extra(train_set, &args)?;
    let scored_as = if args.val > 0 {
        Scored::Validation
    } else {
        Scored::Test
    };
    let plan = plan_of(&args, scored.len())?;
    let ckpt = checkpoint_path(&args.out);
    let resume_from = args
        .resume_from
        .clone()
        .or_else(|| args.resume.then(|| ckpt.clone()));
    let mut session = match &resume_from {
        Some(path) => resumed(path, &args, plan, train_set.len(), &device)?,
        None => started(&args, plan, train_set.len(), &device)?,
    };
    check_eval_batch(&session.plan.config, &args.common)?;
    // The plan distils exactly when --teacher is given (`resumed` refuses a distilling run
    // without it).
    if let Some(path) = &args.teacher {
        add_teacher(&mut session, path, &args, &scored, scored_as, &device)?;
    }
    session.add_train(&train_set);
    // The session's evaluations score these: the validation split when there is one.
    session.add_test(&scored);
    // Every image is here: a resumed pass may not wait for any more.
    session.data_complete();
    println!(
        "training {} parameters ({:?}) on {} images, {} steps per epoch, on the {}, augmentation {}, scored on {} {} images",
        session.plan.config.num_params(),
        session.plan.config,
        session.train_items(),
        session.steps_per_epoch(),
        match args.common.device {
            DeviceChoice::Cpu => match rayon::current_num_threads() {
                1 => "CPU (1 thread)".to_string(),
                threads => format!("CPU ({threads} threads)"),
            },
            DeviceChoice::Gpu => "GPU (wgpu)".to_string(),
        },
        if session.plan.augment { "on" } else { "off" },
        scored.len(),
        scored_as.long_name(),
    );
    let last_checkpoint = |epoch: usize| match epoch - 1 {
        0 if resume_from.is_none() => LastCheckpoint::None,
        _ => LastCheckpoint::In(ckpt.clone()),
    };
    run_epochs(&mut session, &args, &ckpt, scored_as, last_checkpoint)?;
    println!(
        "weights written to {} ({:.0} s of training)",
        args.out.display(),
        session.state().seconds
    );
    Ok(())
}

/// What each epoch is scored on: the held-out end of the training split, or the test set.
#[derive(Clone, Copy)]
enum Scored {
    Validation,
    Test,
}

impl Scored {
    /// As the epoch lines name it (`val acc`, `test acc`).
    fn short_name(self) -> &'static str {
        match self {
            Self::Validation => "val",
            Self::Test => "test",
        }
    }

    fn long_name(self) -> &'static str {
        match self {
            Self::Validation => "held-out validation",
            Self::Test => "test",
        }
    }
}

/// The page's plan type for this command line: the schedule, optimiser and checks are made in
/// one place. Every epoch is scored on all `scored_images`.
fn plan_of(args: &TrainArgs, scored_images: usize) -> Result<TrainingPlan, CliError> {
    let plan = TrainingPlan {
        config: model_config(args)?,
        epochs: args.epochs,
        batch_size: args.batch_size,
        lr: args.lr,
        warmup_epochs: args.warmup_epochs,
        weight_decay: args.weight_decay,
        label_smoothing: args.label_smoothing,
        augment: args.augment,
        seed: args.seed,
        // The whole validation (or test) split, after every epoch.
        eval_images: scored_images,
        eval_every: 0,
        // A mix with a person's set has applied the limit to MNIST's part already.
        train_limit: args.limit.filter(|_| args.extra.is_none()),
        mix: None,
        distillation: args.teacher.as_ref().map(|_| Distillation {
            kind: match args.distill {
                DistillChoice::Soft => DistillationKind::Soft,
                DistillChoice::Hard => DistillationKind::Hard,
            },
            temperature: args.temperature,
            weight: args.distill_weight,
        }),
    };
    plan.validate_within(&Budget::CLI)?;
    Ok(plan)
}

/// A new run: a fresh model, or `--init-from`'s weights (whose config replaces the plan's).
fn started(
    args: &TrainArgs,
    mut plan: TrainingPlan,
    train_items: usize,
    device: &Device,
) -> Result<Session, CliError> {
    let Some(path) = &args.init_from else {
        return Ok(Session::new_within(
            plan,
            train_items,
            device,
            &Budget::CLI,
        )?);
    };
    let file = initial_weights(path, args.dropout)?;
    println!("starting from the weights in {}", path.display());
    plan.config = file.config.clone();
    // The file's model has its own batches to check.
    plan.validate_within(&Budget::CLI)?;
    Ok(Session::from_model(
        plan,
        train_items,
        file.into_model(device),
        device,
    )?)
}

/// `--teacher`'s model, scored once on the run's scored images and said, then given to the
/// session.
fn add_teacher(
    session: &mut Session,
    path: &Path,
    args: &TrainArgs,
    scored: &MnistSet,
    scored_as: Scored,
    device: &Device,
) -> Result<(), CliError> {
    let file = read_weights(path)?;
    check_eval_batch(&file.config, &args.common)?;
    let teacher = file.into_model(device);
    let scored_accuracy = native::evaluate(
        &teacher,
        scored,
        args.common.eval_batch_size,
        file.config.num_classes(),
        device,
    )
    .accuracy();
    println!(
        "distilling from the {} in {} ({} parameters, {} acc {:.2}%)",
        file.config.architecture().name(),
        path.display(),
        file.config.num_params(),
        scored_as.short_name(),
        100.0 * scored_accuracy
    );
    session.set_teacher(teacher)?;
    Ok(())
}

/// Steps to the end of the plan, with a progress line, a score and the files written after
/// each epoch; Ctrl-C or a loss that stops being finite ends it, naming the last checkpoint.
fn run_epochs(
    session: &mut Session,
    args: &TrainArgs,
    ckpt: &Path,
    scored_as: Scored,
    last_checkpoint: impl Fn(usize) -> LastCheckpoint,
) -> Result<(), CliError> {
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let interrupted = interrupted.clone();
        ctrlc::set_handler(move || interrupted.store(true, Ordering::SeqCst))?;
    }
    let interactive = std::io::stderr().is_terminal();
    let steps_per_epoch = session.steps_per_epoch();
    let mut epoch = Epoch::starting(session.step() / steps_per_epoch + 1);
    while !session.is_finished() {
        if interrupted.load(Ordering::SeqCst) {
            eprintln!();
            return Err(CliError::Interrupted {
                epoch: epoch.number,
                last: last_checkpoint(epoch.number),
            });
        }
        let began = Instant::now();
        let pending = session.begin_step().expect("every image is loaded");
        let loss = pending.loss.clone().into_scalar::<f32>();
        let correct = pending.correct.clone().into_scalar::<i64>();
        let seconds = began.elapsed().as_secs_f64();
        if let Err(TrainingError::NonFiniteLoss { step, loss }) =
            session.finish_step(&pending, loss, correct, seconds)
        {
            return Err(CliError::LossBecame {
                loss,
                step,
                last: last_checkpoint(epoch.number),
            });
        }
        epoch.add(pending.images, loss, correct);
        let in_epoch = (session.step() - 1) % steps_per_epoch + 1;
        if interactive {
            eprint!(
                "\r{}",
                epoch.progress(args.epochs, in_epoch, steps_per_epoch)
            );
        } else if in_epoch.is_multiple_of(100) {
            println!("{}", epoch.progress(args.epochs, in_epoch, steps_per_epoch));
        }
        if in_epoch == steps_per_epoch || session.is_finished() {
            if interactive {
                eprintln!();
            }
            end_epoch(session, &epoch, args, ckpt, scored_as)?;
            epoch = Epoch::starting(epoch.number + 1);
        }
    }
    Ok(())
}

/// An epoch's end: its score where one is due, its line, and the weights and checkpoint.
fn end_epoch(
    session: &mut Session,
    epoch: &Epoch,
    args: &TrainArgs,
    ckpt: &Path,
    scored_as: Scored,
) -> Result<(), CliError> {
    let train_seconds = epoch.started.elapsed().as_secs_f64();
    let scored = if epoch.number.is_multiple_of(args.eval_every) || session.is_finished() {
        let accuracy = evaluate(session, args.common.eval_batch_size);
        format!(", {} acc {:.2}%", scored_as.short_name(), 100.0 * accuracy)
    } else {
        String::new()
    };
    println!(
        "epoch {}: train loss {:.4}, train acc {:.2}%{scored}, {:.0} img/s, {:.1} s",
        epoch.number,
        epoch.loss_sum / epoch.seen as f64,
        100.0 * epoch.correct as f64 / epoch.seen as f64,
        epoch.seen as f64 / train_seconds,
        epoch.started.elapsed().as_secs_f64()
    );
    let checkpoint = session.checkpoint();
    let weights = weights::encode(&session.plan.config, &checkpoint.weights.tensors);
    if epoch.number + args.keep_last > args.epochs {
        write_atomically(&epoch_path(&args.out, epoch.number), &weights)?;
    }
    write_atomically(&args.out, &weights)?;
    write_atomically(ckpt, &checkpoint.encode())?;
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
) -> Result<Session, CliError> {
    let bytes = read_checkpoint(path)?;
    let mut checkpoint =
        Checkpoint::decode(&bytes, &Budget::CLI).map_err(|source| CliError::Checkpoint {
            path: path.to_path_buf(),
            source,
        })?;
    let saved = &checkpoint.state;
    if saved.plan.distillation.is_some() && args.teacher.is_none() {
        return Err(CliError::NeedsTeacher {
            path: path.to_path_buf(),
        });
    }
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
    // A person's digits (a run fine-tuned in the page) are the run's own, and so is the
    // count of MNIST images they were mixed with: the pass saved indexes both.
    if saved.plan.mix.is_some() {
        plan.mix = saved.plan.mix.clone();
        plan.train_limit = saved.plan.train_limit;
    }
    // Allowed (a longer --epochs restarts the schedule warm), but never silent.
    let mut changes = changed_options(&saved.plan, &plan);
    let now_items = plan.train_images(train_items);
    if saved.train_items != now_items {
        changes.push(format!(
            "training images {} → {now_items}",
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
    plan.validate_within(&Budget::CLI)?;
    checkpoint.state.train_items = now_items;
    checkpoint.state.plan = plan;
    Session::resume(checkpoint, device).map_err(|source| CliError::Resume {
        path: path.to_path_buf(),
        source,
    })
}

/// A checkpoint's bytes; a folder in its place is an older `vit`'s checkpoint.
fn read_checkpoint(path: &Path) -> Result<Vec<u8>, CliError> {
    if path.is_dir() {
        return Err(CliError::CheckpointFolder {
            path: path.to_path_buf(),
        });
    }
    std::fs::read(path).map_err(CliError::file(path))
}

/// Accuracy on the session's scored images (validation or test), booked in its history.
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
