//! The training panel's view of a run, updated by the trainer's messages alone.

use vitlab::protocol::{
    BackendKind, DataProgress, DeviceNote, FromTrainer, RunState, TrainerFailure, WeightsPurpose,
};
use vitlab::run_view::{MAX_NOTICES, RunEffect, RunFailure, RunView, WorkerLoss};
use vitlab::train::{EvalPoint, History, StepPoint, StepReport, TestReport, TrainingPlan};

fn point(step: usize, loss: f32) -> StepPoint {
    StepPoint {
        step,
        loss,
        smoothed_loss: loss,
        accuracy: 0.5,
    }
}

fn report(step: usize) -> StepReport {
    StepReport {
        point: point(step, 1.0),
        epoch: 1,
        epochs: 3,
        steps_per_epoch: 100,
        total_steps: 300,
        lr: 1e-3,
        images_seen: 64 * step,
        images_per_second: 300.0,
        seconds: 1.0,
        seconds_left: 10.0,
    }
}

#[test]
fn a_run_is_charted_from_its_messages_and_asks_for_what_the_view_cannot_do() {
    let mut view = RunView::default();
    assert_eq!(view.state, RunState::Idle);
    let started = FromTrainer::Started {
        backend: BackendKind::Cpu,
        note: Some(DeviceNote::NoWebGpu),
        plan: TrainingPlan::seed(),
        history: History::default(),
    };
    assert_eq!(
        view.apply(started, None),
        RunEffect::Started {
            plan: TrainingPlan::seed()
        }
    );
    assert_eq!(view.backend, Some(BackendKind::Cpu));
    assert_eq!(view.device_note, Some(DeviceNote::NoWebGpu));
    assert_eq!(
        view.device_note.as_ref().unwrap().to_string(),
        "this browser has no WebGPU"
    );
    view.apply(
        FromTrainer::State {
            state: RunState::Running,
        },
        None,
    );
    let progress = DataProgress {
        chunks: 1,
        total_chunks: 28,
        ..DataProgress::default()
    };
    view.apply(FromTrainer::Data(progress), None);
    assert_eq!(view.data, progress);
    let steps = FromTrainer::Steps {
        points: vec![point(1, 2.3), point(2, 2.1)],
        report: report(2),
    };
    view.apply(steps, None);
    assert_eq!(view.history.steps.len(), 2);
    assert_eq!(view.report.as_ref().map(|r| r.point.step), Some(2));
    let test = TestReport {
        point: EvalPoint {
            step: 2,
            accuracy: 0.9,
            seconds: 1.0,
        },
        examples: 10,
        confusion: vec![vec![1; 10]; 10],
        mistakes: Vec::new(),
    };
    // An evaluation reaches the record with the checkpoint that follows it, not on its own.
    assert_eq!(
        view.apply(FromTrainer::Test(test.clone()), None),
        RunEffect::None
    );
    assert_eq!(view.test, Some(test));
    assert_eq!(view.history.evals.len(), 1, "the test curve gets its point");

    // Weights and run files go where the page sends them, named by the charted step.
    let bytes = vec![1, 2, 3];
    let used = view.apply(
        FromTrainer::Weights {
            purpose: WeightsPurpose::Use,
        },
        Some(bytes.clone()),
    );
    assert_eq!(
        used,
        RunEffect::UseWeights {
            bytes: bytes.clone(),
            source: "training run, step 2".into()
        }
    );
    let download = FromTrainer::Weights {
        purpose: WeightsPurpose::Download,
    };
    assert!(matches!(
        view.apply(download, Some(bytes.clone())),
        RunEffect::Download { name, .. } if name == "vitlab-step-2.safetensors"
    ));
    assert!(matches!(
        view.apply(FromTrainer::RunFile { step: 2 }, Some(bytes)),
        RunEffect::Download { name, .. } if name == "vitlab-run-step-2.ckpt"
    ));
    assert_eq!(
        view.apply(FromTrainer::RunFile { step: 2 }, None),
        RunEffect::None,
        "no bytes, nothing to offer"
    );
    // A change of state moves the run's record.
    assert_eq!(
        view.apply(
            FromTrainer::State {
                state: RunState::Running
            },
            None
        ),
        RunEffect::Moved
    );
    // A rest's checkpoint with its weights behind it: split where the worker said, to keep.
    let checkpoint_and_weights = vec![1, 2, 3, 9, 9];
    let rest = |weights_at| FromTrainer::Checkpoint {
        run: 17,
        step: 40,
        rest: Some(RunState::Paused),
        weights_at,
    };
    assert_eq!(
        view.apply(rest(Some(3)), Some(checkpoint_and_weights.clone())),
        RunEffect::Keep {
            run: 17,
            step: 40,
            rest: Some(RunState::Paused),
            checkpoint: vec![1, 2, 3],
            weights: Some(vec![9, 9]),
        }
    );
    // A split past the end (a hostile or broken worker) is no weights, not a panic.
    assert!(matches!(
        view.apply(rest(Some(usize::MAX)), Some(checkpoint_and_weights.clone())),
        RunEffect::Keep { weights: None, checkpoint, .. } if checkpoint.len() == 5
    ));
    assert_eq!(view.apply(rest(Some(3)), None), RunEffect::None);
    // The view shows the rest only once the page has kept it.
    assert_eq!(view.state, RunState::Running);
    let lost = TrainerFailure::Device {
        backend: BackendKind::WebGpu,
        why: "the device was lost".into(),
        saved: Some(40),
    };
    view.apply(FromTrainer::Failed(lost.clone()), None);
    assert_eq!(view.failure, Some(RunFailure::Trainer(lost)));
    assert_eq!(
        view.failure.as_ref().unwrap().to_string(),
        "The WebGPU device failed: the device was lost. The run saved at step 40 can be resumed."
    );
}

#[test]
fn a_rollback_replaces_the_charts_and_notices_stay_few() {
    let mut view = RunView::default();
    view.apply(
        FromTrainer::Steps {
            points: vec![point(1, 2.0), point(2, f32::MAX)],
            report: report(2),
        },
        None,
    );
    let mut saved = History::default();
    saved.push_step(point(1, 2.0));
    let rolled_back = FromTrainer::Started {
        backend: BackendKind::WebGpu,
        note: None,
        plan: TrainingPlan::seed(),
        history: saved.clone(),
    };
    view.apply(rolled_back, None);
    assert_eq!(view.history, saved);
    assert_eq!(
        view.report, None,
        "the last report is not the rolled-back state"
    );

    for i in 0..MAX_NOTICES + 3 {
        let notice = FromTrainer::Notice {
            message: format!("retry {i}"),
            warning: i % 2 == 0,
        };
        view.apply(notice, None);
    }
    assert_eq!(view.notices.len(), MAX_NOTICES);
    assert_eq!(
        view.notices.last().unwrap().message,
        format!("retry {}", MAX_NOTICES + 2)
    );

    let died = WorkerLoss::Died("out of memory".into());
    assert_eq!(view.worker_lost(died.clone()), RunEffect::RefreshSaved);
    assert_eq!(view.state, RunState::Failed);
    assert_eq!(view.failure, Some(RunFailure::WorkerLost(died)));
    assert!(
        view.failure
            .as_ref()
            .unwrap()
            .to_string()
            .starts_with("The training worker stopped: out of memory. Continue")
    );
    view.reset();
    assert_eq!(view.history, History::default());
    assert!(view.notices.is_empty() && view.samples.is_empty() && view.saved.is_none());
}

#[test]
fn a_cell_s_digits_are_shown_until_the_run_is_cleared() {
    let mut view = RunView::default();
    let cell = vitlab::train::CellDigits {
        label: 4,
        predicted: 9,
        step: 300,
        total: 2,
        indices: vec![17, 40],
        images: vec![vec![0; 784], vec![255; 784]],
    };
    // Through the worker's JSON, as the page gets it.
    let json = serde_json::to_string(&FromTrainer::CellDigits(cell.clone())).unwrap();
    let message: FromTrainer = serde_json::from_str(&json).unwrap();
    assert_eq!(view.apply(message, None), RunEffect::None);
    assert_eq!(view.cell.as_ref(), Some(&cell));
    view.clear();
    assert_eq!(view.cell, None, "a new run has no cell of the old one's");
}

#[test]
fn the_view_counts_the_workers_the_trainer_says_compute_the_steps() {
    let mut view = RunView::default();
    let started = || FromTrainer::Started {
        backend: BackendKind::Cpu,
        note: None,
        plan: TrainingPlan::seed(),
        history: History::default(),
    };
    view.apply(started(), None);
    assert_eq!(view.workers, 1, "one worker until the helper takes a step");
    view.apply(FromTrainer::Workers { count: 2 }, None);
    assert_eq!(view.workers, 2);
    view.apply(FromTrainer::Workers { count: 1 }, None);
    assert_eq!(view.workers, 1, "the helper stopped");
    view.apply(FromTrainer::Workers { count: 2 }, None);
    view.apply(started(), None);
    assert_eq!(view.workers, 1, "a new or rolled-back run starts from one");
}

/// A rest whose checkpoint the worker could not make shows the rest, and asks the page to
/// rest the run where its last keeping left it (on 8dd4619 the worker's bare state left the
/// run "training" for a keeping that never came).
#[test]
fn a_rest_without_its_checkpoint_shows_the_rest_and_asks_for_it() {
    let mut view = RunView::default();
    view.apply(
        FromTrainer::State {
            state: RunState::Running,
        },
        None,
    );
    let effect = view.apply(
        FromTrainer::RestUnsaved {
            run: 7,
            state: RunState::Paused,
        },
        None,
    );
    assert_eq!(view.state, RunState::Paused);
    assert_eq!(
        effect,
        RunEffect::RestedUnsaved {
            run: 7,
            rest: RunState::Paused
        }
    );
}
