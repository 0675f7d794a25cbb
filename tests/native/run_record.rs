//! The runs table's records: what a run's view leaves in them.

use vitlab::protocol::{BackendKind, FromTrainer};
use vitlab::run_record::{KEPT_POINTS, RunRecord, thinned};
use vitlab::run_view::RunView;
use vitlab::train::{EvalPoint, History, StepPoint, TrainingPlan};

fn point(step: usize) -> StepPoint {
    StepPoint {
        step,
        loss: 1.0 / step as f32,
        smoothed_loss: 1.0 / step as f32,
        accuracy: 0.5,
    }
}

#[test]
fn a_record_keeps_the_best_and_last_test_and_a_thinned_history() {
    let mut view = RunView::default();
    view.apply(
        FromTrainer::Started {
            backend: BackendKind::Cpu,
            note: None,
            plan: TrainingPlan::seed(),
            history: History::default(),
        },
        None,
    );
    for step in 1..=900 {
        view.history.push_step(point(step));
    }
    for (step, accuracy) in [(300, 0.9), (600, 0.95), (900, 0.93)] {
        view.history.push_eval(EvalPoint {
            step,
            accuracy,
            seconds: 1.0,
        });
    }
    let mut record = RunRecord::new(1_764_000_000_000, TrainingPlan::seed(), 1_764_000_000_000);
    record.update(&view);
    assert_eq!(record.backend, Some(BackendKind::Cpu));
    assert_eq!(record.best_test, Some(0.95));
    assert_eq!(record.last_test, Some(0.93));
    assert_eq!(record.history.steps.len(), KEPT_POINTS);
    assert_eq!(record.history.steps.first().unwrap().step, 1);
    assert_eq!(
        record.history.steps.last().unwrap().step,
        900,
        "the newest point stays"
    );
    assert_eq!(record.history.evals.len(), 3);
    assert!(record.summary().contains("seed 42"), "{}", record.summary());
    // A record goes through JSON, as the browser keeps it.
    let json = serde_json::to_string(&record).unwrap();
    assert_eq!(serde_json::from_str::<RunRecord>(&json).unwrap(), record);
    println!("a record of a 900-step run: {} bytes of JSON", json.len());
    assert!(json.len() < 64 * 1024, "a {}-byte record", json.len());
}

#[test]
fn thinning_keeps_short_histories_whole() {
    let history = History {
        steps: (1..=10).map(point).collect(),
        evals: Vec::new(),
    };
    assert_eq!(thinned(&history, 300), history);
    assert_eq!(
        thinned(&history, 4)
            .steps
            .iter()
            .map(|p| p.step)
            .collect::<Vec<_>>(),
        [1, 4, 7, 10]
    );
}
