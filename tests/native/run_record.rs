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
    record.update(view.progress());
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

#[test]
fn a_record_at_every_cap_fits_the_store_and_keeps_no_digit_of_the_person() {
    use vitlab::data::{IMAGE_PIXELS, PersonalSet};
    use vitlab::run_record::{KEPT_EVALS, MAX_RECORD_BYTES, MixCounts};
    use vitlab::train::{MAX_MIX_DIGITS, PersonalMix};
    // A fine-tuning on the most digits a mix takes, its pixels as varied as can be (no two
    // alike, none zero: the longest JSON they could make).
    let set = PersonalSet {
        images: (0..MAX_MIX_DIGITS)
            .map(|d| {
                std::array::from_fn::<u8, IMAGE_PIXELS, _>(|p| (100 + (d * 7 + p) % 156) as u8)
            })
            .collect(),
        labels: (0..MAX_MIX_DIGITS).map(|d| (d % 10) as u8).collect(),
    };
    let mut plan = TrainingPlan::lab();
    plan.epochs = TrainingPlan::MAX_EPOCHS;
    plan.train_limit = Some(60_000);
    plan.mix = Some(Box::new(PersonalMix::new(&set, 60)));
    let with_pixels = serde_json::to_string(&plan).unwrap().len();
    let mut record = RunRecord::new(1_764_000_000_000, plan, 1_764_000_000_000);
    assert_eq!(
        record.mix,
        Some(MixCounts {
            digits: MAX_MIX_DIGITS,
            copies: 60
        })
    );
    assert!(record.plan.mix.is_none() && record.fine_tunes());
    // The longest history a view holds: every step point and evaluation it keeps.
    let mut view = RunView::default();
    for step in 1..=2 * History::MAX_POINTS {
        view.history.push_step(point(step));
        view.history.push_eval(EvalPoint {
            step,
            accuracy: 0.123_456_79,
            seconds: 12_345.678,
        });
    }
    assert!(
        view.history.evals.len() <= History::MAX_POINTS + 1,
        "a view's evaluations are bounded"
    );
    record.update(view.progress());
    assert!(record.history.evals.len() <= KEPT_EVALS);
    assert_eq!(
        record.history.evals.last(),
        view.history.evals.last(),
        "the last evaluation kept"
    );
    let json = record.to_kept_json().unwrap();
    println!(
        "a fine-tuning's record at every cap: {} bytes (its plan with the digits would take {with_pixels} bytes); the store reads up to {MAX_RECORD_BYTES}",
        json.len()
    );
    assert!(json.len() < MAX_RECORD_BYTES / 10, "{} bytes", json.len());
    assert!(
        with_pixels > MAX_RECORD_BYTES,
        "the digits alone would not fit: {with_pixels}"
    );
    assert!(record.summary().ends_with(&format!(
        "fine-tuned on {MAX_MIX_DIGITS} of your digits ×60 with 60000 MNIST digits"
    )));
    // A record from before the counts (its digits in its plan) reads back and says the same.
    let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
    old.as_object_mut().unwrap().remove("mix");
    let old: RunRecord = serde_json::from_value(old).unwrap();
    assert_eq!(old.mix, None);
    assert_eq!(old.revision, record.revision);
}
