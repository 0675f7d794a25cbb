//! `vit train` and the page's worker are one training loop: the same plan and seed give the
//! same weights and moments, byte for byte, and a run saved by either resumes in the other.

use std::path::{Path, PathBuf};
use std::process::Command;

use burn::tensor::Tensor;
use vitlab::data::{MnistSet, Split};
use vitlab::model::{Budget, VitConfig};
use vitlab::native;
use vitlab::train::{Checkpoint, PendingStep, Session, TrainingPlan, classify_in_batches};
use vitlab::weights;

use crate::cli::VIT;
use crate::{device, run_now};

/// Training images the tests use: 200 in batches of 64, so an epoch (4 steps) ends inside
/// the second pass and a checkpoint holds the rest of a pass.
const IMAGES: usize = 200;
/// As many steps as the worker keeps in flight before one readback.
const IN_FLIGHT: usize = 8;
/// The worker's evaluation batch (the CLI's default is 500): it must not matter.
const WORKER_EVAL_BATCH: usize = 250;

/// How the learning rate runs: warm-up then cosine decay over the run's epochs, or constant
/// (which a run stopped early and continued can match: the schedule does not depend on the
/// epochs).
#[derive(Clone, Copy)]
enum Rate {
    WarmCosine,
    Constant,
}

/// The command line's options and the plan they make.
fn options(epochs: usize, rate: Rate) -> Vec<String> {
    let mut options = format!(
        "--preset seed --depth 1 --limit {IMAGES} --batch-size 64 --lr 2e-3 --augment \
         --weight-decay 0.05 --label-smoothing 0.1 --seed 3 --threads 1 --epochs {epochs}"
    );
    if let Rate::WarmCosine = rate {
        options.push_str(" --warmup-epochs 0.5");
    }
    options.split(' ').map(str::to_string).collect()
}

fn plan(epochs: usize, rate: Rate, test_images: usize) -> TrainingPlan {
    TrainingPlan {
        config: VitConfig::seed().with_depth(1).into(),
        epochs,
        batch_size: 64,
        lr: 2e-3,
        warmup_epochs: match rate {
            Rate::WarmCosine => Some(0.5),
            Rate::Constant => None,
        },
        weight_decay: 0.05,
        label_smoothing: 0.1,
        augment: true,
        seed: 3,
        eval_images: test_images,
        eval_every: 0,
        distillation: None,
        train_limit: None,
        mix: None,
    }
}

fn data() -> (MnistSet, MnistSet) {
    let dir = native::default_data_dir();
    let train = native::load_split(&dir, Split::Train).unwrap();
    let test = native::load_split(&dir, Split::Test).unwrap();
    (train.slice(0..IMAGES), test)
}

/// `vit train` with [`options`] into `out`, and more arguments.
fn cli_train(out: &Path, epochs: usize, rate: Rate, more: &[&str]) {
    let output = Command::new(VIT)
        .arg("train")
        .args(options(epochs, rate))
        .arg("--out")
        .arg(out)
        .args(more)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn checkpoint_of(out: &Path) -> PathBuf {
    PathBuf::from(format!("{}.ckpt", out.display()))
}

/// Runs `work` on one CPU thread, as `vit train --threads 1` does.
fn on_one_thread<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(work)
}

/// Trains `session` to its end as the worker does: up to [`IN_FLIGHT`] steps begun before
/// one readback of all their losses, an evaluation at each epoch's end, and a save there by
/// the worker's asynchronous path; the checkpoint of the last save.
fn worker_train(session: &mut Session) -> Checkpoint {
    let mut saved = None;
    while !session.is_finished() {
        let mut in_flight: Vec<PendingStep> = Vec::new();
        while in_flight.len() < IN_FLIGHT
            && let Some(pending) = session.begin_step()
        {
            let due = session.evaluation_due();
            in_flight.push(pending);
            if due {
                break;
            }
        }
        let losses = in_flight.iter().map(|step| step.loss.clone());
        let correct = in_flight.iter().map(|step| step.correct.clone().float());
        let values = crate::to_vec(Tensor::cat(losses.chain(correct).collect(), 0));
        let n = in_flight.len();
        for (i, pending) in in_flight.iter().enumerate() {
            let report = session.finish_step(pending, values[i], values[n + i] as i64, 0.01);
            report.unwrap();
        }
        if session.evaluation_due() {
            let indices = session.evaluation_indices();
            let (model, device) = (session.inference_model(), session.device());
            let predicted: Vec<i64> = classify_in_batches(
                &model,
                session.test_set(),
                &indices,
                WORKER_EVAL_BATCH,
                &device,
            )
            .flat_map(|(_, batch)| native::read_ints(batch))
            .collect();
            session.finish_evaluation(&indices, &predicted);
            saved = Some(run_now(session.checkpoint_async()).unwrap());
        }
    }
    saved.expect("an epoch ended")
}

/// The tensors of a checkpoint as bytes: weights, then both moments.
fn tensor_bytes(checkpoint: &Checkpoint) -> Vec<u8> {
    let moments = checkpoint.moments.as_ref().expect("the moments are kept");
    let all = checkpoint
        .weights
        .tensors
        .iter()
        .chain(&moments.first)
        .chain(&moments.second);
    all.flat_map(|tensor| tensor.values.iter().flat_map(|value| value.to_le_bytes()))
        .collect()
}

/// Byte for byte the same weights and moments; on failure, how many of how many bytes differ.
fn assert_same(a: &Checkpoint, b: &Checkpoint) {
    let (a, b) = (tensor_bytes(a), tensor_bytes(b));
    let differ = a.iter().zip(&b).filter(|(x, y)| x != y).count();
    assert!(
        a.len() == b.len() && differ == 0,
        "{differ} of {} bytes differ ({} against {} bytes)",
        a.len(),
        a.len(),
        b.len()
    );
}

fn read_checkpoint(path: &Path) -> Checkpoint {
    Checkpoint::decode(&std::fs::read(path).unwrap(), &Budget::CLI).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vitlab-one-loop-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What the worker's path is asked to do in a process of its own.
const JOB: &str = "VITLAB_WORKER_PATH_JOB";

/// The worker's path, in a process of its own: Burn draws a fresh model from one generator
/// per process, which other tests running in parallel would move.
#[test]
#[ignore = "run by the one-loop tests, each time in a process of its own"]
fn worker_path() {
    let Ok(job) = std::env::var(JOB) else { return };
    let job: Vec<&str> = job.split('\u{1f}').collect();
    let (train, test) = data();
    let checkpoint = on_one_thread(|| match job.as_slice() {
        ["fresh", rate, epochs, _] => {
            let rate = if *rate == "warm" {
                Rate::WarmCosine
            } else {
                Rate::Constant
            };
            let plan = plan(epochs.parse().unwrap(), rate, test.len());
            let mut session = Session::new_within(plan, IMAGES, &device(), &Budget::CLI).unwrap();
            session.add_train(&train);
            session.add_test(&test);
            worker_train(&mut session)
        }
        ["resume", from, epochs, _] => {
            let mut checkpoint = read_checkpoint(Path::new(from));
            // What `vit train --resume-from` does with a longer --epochs.
            checkpoint.state.plan.epochs = epochs.parse().unwrap();
            let mut session = Session::resume(checkpoint, &device()).unwrap();
            session.add_test(&test);
            assert!(!session.can_step(), "its pass waits for its images");
            session.add_train(&train);
            worker_train(&mut session)
        }
        other => panic!("an unknown job {other:?}"),
    });
    std::fs::write(job.last().unwrap(), checkpoint.encode()).unwrap();
}

/// Runs [`worker_path`] on `job`; the checkpoint it saved last, written to `out`.
fn worker(job: &[&str], out: &Path) -> Checkpoint {
    let out_arg = out.display().to_string();
    let job = [job, &[out_arg.as_str()]].concat().join("\u{1f}");
    crate::in_own_process("one_loop::worker_path", (JOB, &job));
    read_checkpoint(out)
}

#[test]
fn the_cli_and_the_worker_train_the_same_weights_byte_for_byte() {
    let dir = scratch("same");
    let out = dir.join("cli.safetensors");
    cli_train(&out, 2, Rate::WarmCosine, &[]);
    let cli = read_checkpoint(&checkpoint_of(&out));
    let worker = worker(&["fresh", "warm", "2"], &dir.join("worker.ckpt"));
    assert_eq!(worker.state.step, 8);
    assert_eq!(cli.state.step, 8);
    assert_same(&worker, &cli);
    assert_eq!(
        weights::encode(&worker.weights.config, &worker.weights.tensors),
        std::fs::read(&out).unwrap(),
        "the weights file too"
    );
    // The same evaluations, whatever their batches.
    let accuracies = |c: &Checkpoint| {
        c.state
            .history
            .evals
            .iter()
            .map(|e| e.accuracy)
            .collect::<Vec<_>>()
    };
    assert_eq!(accuracies(&worker), accuracies(&cli));
    assert_eq!(
        (worker.state.pass_left, worker.state.shuffle_rng),
        (cli.state.pass_left, cli.state.shuffle_rng)
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_run_saved_by_either_resumes_in_the_other_as_if_never_stopped() {
    let dir = scratch("resume");
    let straight = dir.join("straight.safetensors");
    cli_train(&straight, 2, Rate::Constant, &[]);
    let straight = read_checkpoint(&checkpoint_of(&straight));

    // Saved by the command line after epoch 1, continued by the worker to epoch 2.
    let by_cli = dir.join("by-cli.safetensors");
    cli_train(&by_cli, 1, Rate::Constant, &[]);
    let saved = checkpoint_of(&by_cli);
    assert!(
        !read_checkpoint(&saved).state.pass_left.is_empty(),
        "the pass is cut"
    );
    let saved_arg = saved.display().to_string();
    let continued = worker(
        &["resume", &saved_arg, "2"],
        &dir.join("continued-by-worker.ckpt"),
    );
    assert_same(&continued, &straight);

    // Saved by the worker after epoch 1, continued by the command line to epoch 2.
    let by_worker = dir.join("by-worker.ckpt");
    worker(&["fresh", "constant", "1"], &by_worker);
    let out = dir.join("continued.safetensors");
    let from = by_worker.display().to_string();
    cli_train(&out, 2, Rate::Constant, &["--resume-from", &from]);
    assert_same(&read_checkpoint(&checkpoint_of(&out)), &straight);
    std::fs::remove_dir_all(dir).unwrap();
}

/// A run fine-tuned in the page carries the person's digits in its plan: `vit train
/// --resume-from` continues it with them (and with the MNIST count they were mixed with),
/// whatever its own options say.
#[test]
fn a_fine_tuning_saved_by_the_page_resumes_on_the_command_line_with_its_digits() {
    use vitlab::data::PersonalSet;
    use vitlab::train::PersonalMix;
    let dir = scratch("mix-resume");
    let (train, _) = data();
    let own = train.slice(0..6);
    let set = PersonalSet {
        images: own
            .images
            .chunks(vitlab::data::IMAGE_PIXELS)
            .map(|image| image.try_into().unwrap())
            .collect(),
        labels: own.labels.clone(),
    };
    let plan = TrainingPlan {
        train_limit: Some(IMAGES),
        mix: Some(Box::new(PersonalMix::new(&set, 3))),
        ..plan(1, Rate::Constant, 100)
    };
    let mut session = Session::new(plan.clone(), 60_000, &device()).unwrap();
    session.add_train(&train);
    // One step in, as a page would save it at a pause.
    let pending = session.begin_step().expect("its data is here");
    let loss = pending.loss.clone().into_scalar::<f32>();
    let correct = pending.correct.clone().into_scalar::<i64>();
    session.finish_step(&pending, loss, correct, 0.01).unwrap();
    let saved = dir.join("fine-tuned.ckpt");
    std::fs::write(&saved, session.checkpoint().encode()).unwrap();
    let out = dir.join("continued.safetensors");
    let from = saved.display().to_string();
    cli_train(&out, 1, Rate::Constant, &["--resume-from", &from]);
    let continued = read_checkpoint(&checkpoint_of(&out));
    assert_eq!(continued.state.plan.mix, plan.mix, "the digits came along");
    assert_eq!(continued.state.train_items, IMAGES + 18);
    assert_eq!(
        continued.state.step,
        (IMAGES + 18).div_ceil(64),
        "one epoch of both"
    );
    std::fs::remove_dir_all(dir).unwrap();
}
