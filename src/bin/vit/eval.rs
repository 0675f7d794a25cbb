//! `vit eval`: accuracy of a weights file on the test images or a validation split, per
//! class, optionally as JSON.

use std::path::PathBuf;
use std::time::Instant;

use vitlab::data::Split;
use vitlab::model::{Budget, ModelConfig};
use vitlab::native;

use crate::args::{Common, EvalSplit};
use crate::error::CliError;
use crate::files::read_weights;
use crate::setup;

pub fn eval(
    path: PathBuf,
    split: EvalSplit,
    val: usize,
    personal: Option<PathBuf>,
    json: bool,
    common: Common,
) -> Result<(), CliError> {
    let (data_dir, device) = setup(&common)?;
    let file = read_weights(&path)?;
    check_eval_batch(&file.config, &common)?;
    let (model, config) = (file.into_model(&device), file.config);
    let (images, name) = match (personal, split) {
        (Some(dir), _) => (native::load_personal(&dir)?.to_set(), "personal"),
        (None, EvalSplit::Test) => (native::load_split(&data_dir, Split::Test)?, "test"),
        (None, EvalSplit::Val) => (
            native::load_train_and_validation(&data_dir, val)?.1,
            "validation",
        ),
    };
    let started = Instant::now();
    let evaluation = native::evaluate(
        &model,
        &images,
        common.eval_batch_size,
        config.num_classes(),
        &device,
    );
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{name} accuracy {:.2}% ({} / {}) in {seconds:.1} s",
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
            "split": name,
            "accuracy": evaluation.accuracy(),
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

/// Refuses a model whose evaluation batches `vit` cannot afford.
pub fn check_eval_batch(config: &ModelConfig, common: &Common) -> Result<(), CliError> {
    let batch = common.eval_batch_size;
    config
        .check_budget(&Budget::CLI, Some(batch))
        .map(|_| ())
        .map_err(|source| CliError::EvalBatch { source, batch })
}
