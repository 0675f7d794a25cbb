//! The page's training session and chunk loader, run natively.

use std::cell::RefCell;

use vitlab::data::{
    ChunkEntry, Decoding, MnistSet, RetryPolicy, encode_chunk, load_verified, sha256_hex,
};
use vitlab::model::{Budget, VitConfig};
use vitlab::native;
use vitlab::protocol::{FromTrainer, ToTrainer, TrainerFailure, WeightsPurpose};
use vitlab::train::{
    Checkpoint, History, Session, StepPoint, TrainingError, TrainingPlan, test_report,
};
use vitlab::weights;

use crate::{device, run_now};

fn first_chunk() -> (ChunkEntry, Vec<u8>) {
    let dir = native::default_data_dir();
    let manifest = native::read_manifest(&dir).unwrap();
    let entry = manifest.train[0].clone();
    let bytes = std::fs::read(dir.join(&entry.file)).unwrap();
    (entry, bytes)
}

fn no_wait(_: u32) -> std::future::Ready<()> {
    std::future::ready(())
}

#[test]
fn a_damaged_chunk_is_fetched_again_until_it_checks_out() {
    let (entry, good) = first_chunk();
    let mut damaged = good.clone();
    damaged[1000] ^= 0x40;
    let good_copy = good.clone();
    let answers = RefCell::new(vec![Err("HTTP 503".to_string()), Ok(damaged), Ok(good)]);
    let mut retries = Vec::new();
    let waits = RefCell::new(Vec::new());
    // In slices, as the page decodes: each try's decoding pauses between slices.
    let set = run_now(load_verified(
        &entry,
        RetryPolicy::default(),
        Decoding::InSlices(64 * 1024),
        |_| std::future::ready(answers.borrow_mut().remove(0)),
        |ms| {
            waits.borrow_mut().push(ms);
            std::future::ready(())
        },
        |retry| retries.push(retry.clone()),
    ))
    .unwrap();
    assert_eq!(set, vitlab::data::decode_chunk(&good_copy, &entry).unwrap());
    let pauses = waits.borrow().iter().filter(|&&ms| ms == 0).count();
    // The good try alone: ~400 KB hashed and ~2 MB inflated, 64 KB a slice.
    assert!(pauses > 30, "{pauses} pauses");
    assert_eq!(retries.len(), 2);
    assert!(retries[0].reason.contains("503"), "{:?}", retries[0]);
    assert!(retries[1].reason.contains("checksum"), "{:?}", retries[1]);
    assert_eq!(
        retries.iter().map(|r| r.delay_ms).collect::<Vec<_>>(),
        [500, 1000],
        "the wait doubles"
    );
}

#[test]
fn a_chunk_that_never_arrives_is_an_error_naming_it() {
    let (entry, _) = first_chunk();
    let policy = RetryPolicy {
        attempts: 3,
        ..RetryPolicy::default()
    };
    let mut tries = Vec::new();
    let error = run_now(load_verified(
        &entry,
        policy,
        Decoding::AtOnce,
        |attempt| {
            tries.push(attempt);
            std::future::ready(Err::<Vec<u8>, _>("offline".to_string()))
        },
        no_wait,
        |_| {},
    ))
    .unwrap_err()
    .to_string();
    assert_eq!(tries, [1, 2, 3]);
    assert!(
        error.contains(&entry.file) && error.contains("3 tries"),
        "{error}"
    );
}

#[test]
fn backoff_is_capped() {
    let policy = RetryPolicy::default();
    assert_eq!(policy.delay_ms(1), 500);
    assert_eq!(policy.delay_ms(4), 4000);
    assert_eq!(policy.delay_ms(30), policy.max_delay_ms);
}

fn tiny_plan() -> TrainingPlan {
    TrainingPlan {
        config: VitConfig::seed()
            .with_depth(1)
            .with_dim(32)
            .with_heads(4)
            .with_mlp_dim(64)
            .with_dropout(0.0)
            .into(),
        epochs: 2,
        batch_size: 32,
        lr: 3e-3,
        eval_images: 64,
        eval_every: 5,
        ..TrainingPlan::seed()
    }
}

fn digits(count: usize) -> MnistSet {
    let (entry, bytes) = first_chunk();
    vitlab::data::decode_chunk(&bytes, &entry)
        .unwrap()
        .slice(0..count)
}

/// Runs the session's steps synchronously, as the native backend allows.
fn run_steps(session: &mut Session, steps: usize) -> Vec<f32> {
    (0..steps)
        .map(|_| {
            let pending = session.begin_step().expect("data is loaded");
            let loss = pending.loss.clone().into_scalar::<f32>();
            let correct = pending.correct.clone().into_scalar::<i64>();
            session
                .finish_step(&pending, loss, correct, 0.01)
                .unwrap()
                .point
                .loss
        })
        .collect()
}

#[test]
fn a_session_waits_for_data_then_trains_and_lowers_the_loss() {
    let device = device();
    // 20 steps an epoch over a 640-image "split", of which 128 arrive first.
    let plan = TrainingPlan {
        epochs: 4,
        ..tiny_plan()
    };
    let mut session = Session::new(plan, 640, &device).unwrap();
    assert!(session.begin_step().is_none(), "no step before data");
    let data = digits(256);
    session.add_train(&data.slice(0..128));
    let early = run_steps(&mut session, 4);
    session.add_train(&data.slice(128..256));
    assert_eq!(session.train_loaded(), 256);
    let late = run_steps(&mut session, 56);
    let mean = |l: &[f32]| l.iter().sum::<f32>() / l.len() as f32;
    assert!(
        mean(&late[50..]) < 0.75 * mean(&early),
        "{early:?} → {late:?}"
    );
    assert_eq!(session.step(), 60);
    assert_eq!(session.steps_per_epoch(), 20);
    assert_eq!(session.history.steps.len(), 60);
}

/// Whether an evaluation is due after each of the next `steps` steps.
fn due_after_each_step(session: &mut Session, steps: usize) -> Vec<bool> {
    (0..steps)
        .map(|_| {
            run_steps(session, 1);
            session.evaluation_due()
        })
        .collect()
}

#[test]
fn evaluation_is_due_every_n_steps_and_at_epoch_ends_and_reports_mistakes() {
    let device = device();
    let mut plan = tiny_plan();
    plan.eval_every = 0;
    let mut session = Session::new(plan, 96, &device).unwrap();
    session.add_train(&digits(96));
    session.add_test(&digits(64));
    assert_eq!(
        due_after_each_step(&mut session, 6),
        [false, false, true, false, false, true]
    );
    assert!(session.is_finished(), "2 epochs of 3 steps");
    assert!(session.begin_step().is_none(), "no step past the plan");

    let indices = session.evaluation_indices();
    let model = session.inference_model();
    let device = session.device();
    let batches =
        vitlab::train::classify_in_batches(&model, session.test_set(), &indices, 40, &device);
    assert_eq!(
        batches.map(|(batch, _)| batch.len()).collect::<Vec<_>>(),
        [40, 24]
    );
    // A model that always says 1.
    let predicted = vec![1i64; indices.len()];
    let report = session.finish_evaluation(&indices, &predicted);
    let ones = indices
        .iter()
        .filter(|&&i| session.test_set().labels[i] == 1)
        .count();
    assert_eq!(report.examples, 64);
    assert!((report.point.accuracy - ones as f32 / 64.0).abs() < 1e-6);
    assert_eq!(
        report.mistakes.len(),
        (64 - ones).min(vitlab::train::MAX_MISTAKES)
    );
    assert!(
        report
            .mistakes
            .iter()
            .all(|m| m.predicted == 1 && m.label != 1)
    );
    assert_eq!(report.confusion.iter().map(|row| row[1]).sum::<usize>(), 64);
    assert_eq!(session.history.evals.len(), 1);

    // Every 2 steps as well: steps 2, 4 and 6, and 3 and 6 as epochs end.
    let mut plan = tiny_plan();
    plan.eval_every = 2;
    let mut session = Session::new(plan, 96, &device).unwrap();
    session.add_train(&digits(96));
    assert_eq!(
        due_after_each_step(&mut session, 6),
        [false, true, true, true, false, true]
    );
}

#[test]
fn each_step_reports_its_epoch_rate_and_smoothed_figures() {
    let device = device();
    let plan = TrainingPlan {
        warmup_epochs: Some(0.5),
        ..tiny_plan()
    };
    let schedule = plan.schedule(640);
    // 640 images of 32: 20 steps an epoch, 2 epochs.
    let mut session = Session::new(plan, 640, &device).unwrap();
    session.add_train(&digits(64));
    let losses = [2.0f32, 1.0, 4.0];
    let mut reports = Vec::new();
    for (step, loss) in (1..=21).zip(losses.iter().cycle()) {
        let pending = session.begin_step().unwrap();
        assert_eq!(pending.lr, schedule.at(step - 1), "step {step}");
        reports.push(session.finish_step(&pending, *loss, 16, 0.5).unwrap());
    }
    let first = &reports[0];
    // Bias-corrected smoothing: the first point is the first value itself.
    assert_eq!(first.point.smoothed_loss, 2.0);
    assert_eq!(first.point.accuracy, 0.5);
    assert!((first.images_per_second - 64.0).abs() < 1e-9);
    assert_eq!((first.epoch, first.epochs, first.total_steps), (1, 2, 40));
    // Later, the smoothed loss lies between the extremes and is not the last raw value.
    let second = &reports[1];
    assert!(second.point.smoothed_loss > 1.0 && second.point.smoothed_loss < 2.0);
    assert_eq!((reports[19].epoch, reports[20].epoch), (1, 2));
    assert_eq!(reports[20].images_seen, 21 * 32);
    assert!((reports[20].seconds - 10.5).abs() < 1e-9);
    // 19 steps of 32 images left at 64 images/s.
    assert!((reports[20].seconds_left - 19.0 * 32.0 / 64.0).abs() < 1e-6);
    assert!(reports[5].lr > reports[0].lr, "warming up");
}

#[test]
fn a_nan_loss_stops_the_run_with_a_message() {
    let device = device();
    let mut session = Session::new(tiny_plan(), 640, &device).unwrap();
    session.add_train(&digits(64));
    let pending = session.begin_step().unwrap();
    let error = session.finish_step(&pending, f32::NAN, 3, 0.1).unwrap_err();
    assert!(matches!(
        error,
        TrainingError::NonFiniteLoss { step: 1, .. }
    ));
    assert!(error.to_string().contains("NaN"), "{error}");
    assert!(session.history.steps.is_empty(), "the NaN is not charted");
}

#[test]
fn a_saved_session_resumes_from_its_checkpoint_as_if_never_stopped() {
    // What the page and `vit train` save: one checkpoint of weights, moments and state.
    let device = device();
    let data = digits(100);
    let mut original = Session::new(tiny_plan(), 640, &device).unwrap();
    original.add_train(&data);
    run_steps(&mut original, 3);
    let bytes = original.checkpoint().encode();
    assert!(Checkpoint::decode(&bytes[..bytes.len() / 2], &Budget::PAGE).is_err());
    let checkpoint = Checkpoint::decode(&bytes, &Budget::PAGE).unwrap();
    let moments = checkpoint.moments.as_ref().expect("the moments are kept");
    assert_eq!(moments.times.iter().max(), Some(&3));
    let mut resumed = Session::resume(checkpoint, &device).unwrap();
    assert_eq!(resumed.step(), 3);
    assert_eq!(resumed.history, original.history);
    assert_eq!(resumed.state(), original.state(), "the same run state");
    assert!(
        !resumed.can_step(),
        "it waits for the images its pass kept places for"
    );
    assert_eq!(
        weights::to_safetensors(&resumed.inference_model(), &resumed.plan.config),
        weights::to_safetensors(&original.inference_model(), &original.plan.config),
        "the same parameters"
    );
    resumed.add_train(&data);
    // 100 images in batches of 32: step 4 ends a pass whose rest was saved, step 5 starts
    // the next; moments, data order and masks all carry over.
    run_steps(&mut original, 2);
    run_steps(&mut resumed, 2);
    assert_eq!(resumed.step(), 5);
    assert_eq!(resumed.history.steps.len(), 5, "the charts continue");
    assert_eq!(
        resumed.checkpoint().encode(),
        original.checkpoint().encode(),
        "byte for byte the run never stopped"
    );
}

#[test]
fn history_keeps_its_newest_point_when_thinned() {
    let mut history = History::default();
    for step in 1..=History::MAX_POINTS + 1 {
        history.push_step(StepPoint {
            step,
            loss: 1.0,
            smoothed_loss: 1.0,
            accuracy: 0.5,
        });
    }
    assert!(history.steps.len() <= History::MAX_POINTS / 2 + 2);
    assert_eq!(history.steps.last().unwrap().step, History::MAX_POINTS + 1);
    assert_eq!(history.steps[0].step, 1);
}

#[test]
fn presets_are_valid_and_bad_plans_say_why() {
    for preset in vitlab::model::Preset::ALL {
        TrainingPlan::preset(preset).validate().unwrap();
    }
    let mut plan = TrainingPlan::seed();
    plan.lr = -1e-3;
    assert!(
        plan.validate()
            .unwrap_err()
            .to_string()
            .contains("learning rate")
    );
    plan.lr = f64::NAN;
    assert!(
        plan.validate()
            .unwrap_err()
            .to_string()
            .contains("learning rate")
    );
    plan = TrainingPlan::seed();
    plan.label_smoothing = 1.0;
    assert!(
        plan.validate()
            .unwrap_err()
            .to_string()
            .contains("smoothing")
    );
    plan = TrainingPlan::seed();
    plan.config.vit_mut().unwrap().heads = 5;
    assert!(plan.validate().unwrap_err().to_string().contains("heads"));
    assert!(TrainingPlan::lab().schedule(60_000).warmup_steps > 0);
}

#[test]
fn test_report_counts_every_prediction() {
    let set = digits(10);
    let indices: Vec<usize> = (0..10).collect();
    let mut predicted: Vec<i64> = set.labels.iter().map(|&l| l as i64).collect();
    // Two mistakes: images 3 and 7 are called the next digit.
    for i in [3, 7] {
        predicted[i] = (predicted[i] + 1) % 10;
    }
    let report = test_report(&set, &indices, &predicted, 7, 1.5);
    assert_eq!((report.point.step, report.point.seconds), (7, 1.5));
    assert_eq!(report.examples, 10);
    assert!((report.point.accuracy - 0.8).abs() < 1e-6);
    let diagonal: usize = (0..10).map(|d| report.confusion[d][d]).sum();
    assert_eq!(diagonal, 8);
    assert_eq!(report.confusion.iter().flatten().sum::<usize>(), 10);
    let found: Vec<(u8, u8)> = report
        .mistakes
        .iter()
        .map(|m| (m.label, m.predicted))
        .collect();
    let expected: Vec<(u8, u8)> = [3, 7].map(|i| (set.labels[i], predicted[i] as u8)).to_vec();
    assert_eq!(found, expected);
    for (mistake, i) in report.mistakes.iter().zip([3, 7]) {
        assert!(report.confusion[mistake.label as usize][mistake.predicted as usize] >= 1);
        assert_eq!(mistake.image, set.image(i));
    }
}

#[test]
fn messages_survive_json() {
    let messages = [
        ToTrainer::Start {
            plan: TrainingPlan::lab(),
            backend: Some(vitlab::protocol::BackendKind::Cpu),
            run: 42,
        },
        ToTrainer::ExportWeights {
            purpose: WeightsPurpose::Download,
        },
    ];
    for message in messages {
        let json = serde_json::to_string(&message).unwrap();
        assert_eq!(serde_json::from_str::<ToTrainer>(&json).unwrap(), message);
    }
    let failed = FromTrainer::Failed(TrainerFailure::NoTrainingData);
    let json = serde_json::to_string(&failed).unwrap();
    assert_eq!(serde_json::from_str::<FromTrainer>(&json).unwrap(), failed);
}

#[test]
fn chunk_loader_accepts_a_freshly_encoded_chunk() {
    let set = digits(50);
    let bytes = encode_chunk(&set);
    let entry = ChunkEntry {
        file: "x.bin".into(),
        items: 50,
        bytes: bytes.len(),
        sha256: sha256_hex(&bytes),
    };
    let loaded = run_now(load_verified(
        &entry,
        RetryPolicy::default(),
        Decoding::AtOnce,
        |_| std::future::ready(Ok(bytes.clone())),
        no_wait,
        |_| panic!("no retry needed"),
    ))
    .unwrap();
    assert_eq!(loaded, set);
}

#[test]
fn a_confusion_cell_gives_back_its_own_test_digits() {
    let plan = TrainingPlan {
        eval_images: 1000,
        ..tiny_plan()
    };
    let mut session = Session::new(plan, 64, &device()).unwrap();
    let test = digits(1000);
    session.add_test(&test);
    assert_eq!(session.cell_digits(3, 3), None, "no evaluation yet");
    let indices = session.evaluation_indices();
    // Every third digit taken for the next one, the rest right.
    let guesses: Vec<i64> = indices
        .iter()
        .map(|&i| {
            let label = test.labels[i] as i64;
            if i % 3 == 0 { (label + 1) % 10 } else { label }
        })
        .collect();
    let report = session.finish_evaluation(&indices, &guesses);
    for (label, predicted) in [(3u8, 4u8), (7, 7), (9, 0), (2, 5)] {
        let cell = session.cell_digits(label, predicted).unwrap();
        assert_eq!(
            cell.total,
            report.confusion[label as usize][predicted as usize]
        );
        assert_eq!(
            cell.indices.len(),
            cell.total.min(vitlab::train::CellDigits::MAX)
        );
        assert_eq!(cell.step, report.point.step);
        for (&i, image) in cell.indices.iter().zip(&cell.images) {
            assert_eq!(test.labels[i], label);
            assert_eq!(guesses[i] as u8, predicted);
            assert_eq!(image.as_slice(), test.image(i));
        }
        assert!(
            cell.indices.windows(2).all(|w| w[0] < w[1]),
            "in test-set order"
        );
    }
    assert_eq!(
        session.cell_digits(2, 5).unwrap().total,
        0,
        "a pair never confused"
    );
    assert!(session.cell_digits(7, 7).unwrap().total > vitlab::train::CellDigits::MAX);
    assert_eq!(session.cell_digits(10, 0), None, "not a class");
}

/// The first `count` training chunks, as the page's loader delivers them.
fn train_chunks(count: usize) -> Vec<MnistSet> {
    let dir = native::default_data_dir();
    let manifest = native::read_manifest(&dir).unwrap();
    manifest.train[..count]
        .iter()
        .map(|entry| {
            let bytes = std::fs::read(dir.join(&entry.file)).unwrap();
            vitlab::data::decode_chunk(&bytes, entry).unwrap()
        })
        .collect()
}

#[test]
fn chunks_join_the_pass_at_their_steps_however_late_they_arrive() {
    use vitlab::train::{JOIN_IMAGES, JOIN_STEPS};
    let chunks = train_chunks(3);
    assert!(chunks.iter().all(|c| c.len() == JOIN_IMAGES));
    let plan = TrainingPlan {
        epochs: 1,
        augment: true,
        ..tiny_plan()
    };
    let steps = 3 * JOIN_STEPS + 2;
    // All the data at once, offered before the first step: chunks still join on schedule.
    let mut early = Session::new(plan.clone(), 3 * JOIN_IMAGES, &device()).unwrap();
    chunks.iter().for_each(|c| early.offer_train(c.clone()));
    let saved_at = JOIN_STEPS + 2;
    let mut early_losses = run_steps(&mut early, saved_at);
    let saved = early.checkpoint();
    early_losses.extend(run_steps(&mut early, steps - saved_at));
    // Each chunk as late as it can be: the run waits for it at its step.
    let mut late = Session::new(plan, 3 * JOIN_IMAGES, &device()).unwrap();
    let mut late_losses = Vec::new();
    for (k, chunk) in chunks.iter().enumerate() {
        late.offer_train(chunk.clone());
        while late.can_step() && late_losses.len() < steps {
            late_losses.extend(run_steps(&mut late, 1));
        }
        if k < 2 {
            assert_eq!(
                late.step(),
                (k + 1) * JOIN_STEPS,
                "waits for chunk {}",
                k + 1
            );
            assert_eq!(late.train_loaded(), (k + 1) * JOIN_IMAGES);
        }
    }
    assert_eq!(late_losses, early_losses, "the same batches, loss for loss");

    // Saved with a chunk waiting to join, resumed, its data offered again: the same steps.
    let mut resumed = Session::resume(saved, &device()).unwrap();
    chunks.iter().for_each(|c| resumed.offer_train(c.clone()));
    assert_eq!(
        run_steps(&mut resumed, steps - saved_at),
        early_losses[saved_at..]
    );

    // A chunk that never comes (given up on) holds the run only until the data is complete.
    let mut short = Session::new(tiny_plan(), 3 * JOIN_IMAGES, &device()).unwrap();
    short.offer_train(chunks[0].clone());
    run_steps(&mut short, JOIN_STEPS);
    assert!(!short.can_step());
    short.data_complete();
    assert!(short.can_step());
}

/// A plan's training-image limit (a data-scaling point in the page): chunks arrive whole, the
/// run takes the first images up to the limit, its epochs are that long, and it does not wait
/// for the chunks it will never use.
#[test]
fn a_run_limited_to_some_images_takes_those_and_does_not_wait_for_the_rest() {
    let device = device();
    let plan = TrainingPlan {
        train_limit: Some(100),
        ..tiny_plan()
    };
    let mut session = Session::new(plan, 60_000, &device).unwrap();
    assert_eq!(session.steps_per_epoch(), 4); // 100 images, batches of 32
    let chunk = digits(300);
    session.offer_train(chunk.slice(0..150));
    session.offer_train(chunk.slice(150..300));
    assert_eq!(session.train_loaded(), 100);
    assert!(session.can_step(), "a full run waits for no chunk");
    run_steps(&mut session, 8);
    assert!(session.is_finished());
    assert_eq!(session.state().train_items, 100);
    // The limit travels with the plan (saved runs, checkpoints, links of the page).
    let json = serde_json::to_string(&session.plan).unwrap();
    assert!(json.contains("\"train_limit\":100"), "{json}");
    assert!(
        !serde_json::to_string(&tiny_plan())
            .unwrap()
            .contains("train_limit")
    );
    let refused = TrainingPlan {
        train_limit: Some(0),
        ..tiny_plan()
    };
    assert!(refused.validate().is_err());
}

/// Fine-tuning on a person's digits: they travel in the plan and come first, each `copies`
/// times an epoch, before the plan's MNIST images, which join on the schedule (never at once,
/// never depending on when they arrive); the run starts from the weights given, and a
/// checkpoint continues it with nothing but MNIST's chunks offered again.
#[test]
fn a_fine_tuning_mix_trains_a_persons_digits_with_mnist_and_resumes_from_its_checkpoint() {
    use vitlab::data::{IMAGE_PIXELS, PersonalSet};
    use vitlab::train::{MAX_COPIES, MAX_MIX_DIGITS, MixError, PersonalMix, PlanError};
    let device = device();
    let chunk = train_chunks(1).remove(0);
    // Six digits from the end of the chunk, drawn white on black: unlike any MNIST digit.
    let own = chunk.slice(2494..2500);
    let set = PersonalSet {
        images: own
            .images
            .chunks(IMAGE_PIXELS)
            .map(|image| std::array::from_fn(|i| 255 - image[i]))
            .collect(),
        labels: own.labels.clone(),
    };
    let base = Session::new(tiny_plan(), 100, &device).unwrap();
    let start = weights::to_safetensors(&base.inference_model(), &base.plan.config);
    let plan = TrainingPlan {
        epochs: 2,
        train_limit: Some(46),
        mix: Some(Box::new(PersonalMix::new(&set, 3))),
        ..tiny_plan()
    };
    let fine_tune = || {
        let (model, _) = weights::load(&start, &device).unwrap();
        Session::from_model(plan.clone(), 60_000, model, &device).unwrap()
    };
    let mut original = fine_tune();
    assert_eq!(original.train_items(), 46 + 6 * 3);
    assert_eq!(original.steps_per_epoch(), 2);
    assert_eq!(
        original.train_loaded(),
        18,
        "the person's digits, 3 times each"
    );
    assert!(
        !original.can_step(),
        "MNIST's first images are due at step 0"
    );
    original.offer_train(chunk.clone());
    assert_eq!(original.train_loaded(), 64);
    let first = run_steps(&mut original, 1);
    let checkpoint = Checkpoint::decode(&original.checkpoint().encode(), &Budget::PAGE).unwrap();
    assert_eq!(
        checkpoint.state.plan, plan,
        "the digits travel in the saved plan"
    );
    let rest = run_steps(&mut original, 3);
    assert!(original.is_finished());

    let mut resumed = Session::resume(checkpoint, &device).unwrap();
    assert_eq!(resumed.train_loaded(), 18);
    assert!(!resumed.can_step(), "it waits for MNIST's images");
    resumed.offer_train(chunk.clone());
    assert_eq!(
        run_steps(&mut resumed, 3),
        rest,
        "the same batches, loss for loss"
    );
    assert_eq!(
        resumed.checkpoint().encode(),
        original.checkpoint().encode()
    );
    // The same plan from the same weights: the same first step.
    let mut again = fine_tune();
    again.offer_train(chunk.clone());
    assert_eq!(run_steps(&mut again, 1), first);

    // MNIST's chunks join on their schedule counted in MNIST images alone: the second chunk
    // at step 4, as without a mix (counting the person's 18 would hold it to step 8).
    let mut joined = Session::from_model(
        TrainingPlan {
            train_limit: Some(2600),
            ..plan.clone()
        },
        60_000,
        weights::load(&start, &device).unwrap().0,
        &device,
    )
    .unwrap();
    assert_eq!(joined.mnist_loaded(), 0);
    joined.offer_train(chunk.clone());
    joined.offer_train(chunk.clone());
    assert_eq!(joined.mnist_loaded(), 2500);
    run_steps(&mut joined, 4);
    assert_eq!(joined.mnist_loaded(), 2600);
    assert_eq!(joined.train_loaded(), 2618);

    let with = |mix: PersonalMix| {
        TrainingPlan {
            mix: Some(Box::new(mix)),
            ..tiny_plan()
        }
        .validate()
    };
    let mix = PersonalMix::new(&set, 3);
    let mut labelled_ten = mix.clone();
    labelled_ten.labels[2] = 10;
    assert_eq!(
        with(labelled_ten),
        Err(PlanError::Mix(MixError::Label {
            index: 2,
            label: 10
        }))
    );
    let mut short = mix.clone();
    short.pixels.pop();
    assert!(matches!(
        with(short),
        Err(PlanError::Mix(MixError::Pixels { .. }))
    ));
    for copies in [0, MAX_COPIES + 1] {
        let mix = PersonalMix {
            copies,
            ..mix.clone()
        };
        assert_eq!(with(mix), Err(PlanError::Mix(MixError::Copies(copies))));
    }
    let none = PersonalMix::new(&PersonalSet::default(), 3);
    assert_eq!(with(none), Err(PlanError::Mix(MixError::Digits)));
    // 1,000 digits, each 100 times: 100,000 images an epoch, past the cap.
    let many = PersonalSet {
        images: vec![set.images[0]; MAX_MIX_DIGITS],
        labels: vec![1; MAX_MIX_DIGITS],
    };
    let too_many = PersonalMix::new(&many, MAX_COPIES);
    assert_eq!(
        with(too_many),
        Err(PlanError::Mix(MixError::Images(
            MAX_MIX_DIGITS * MAX_COPIES
        )))
    );
    let mut over = PersonalMix::new(&many, 1);
    over.labels.push(1);
    over.pixels.extend_from_slice(&set.images[0]);
    assert_eq!(with(over), Err(PlanError::Mix(MixError::Digits)));
}
