//! Before and after a fine-tuning ("Learn my handwriting"), measured in workers of its own (a
//! drawing worker on the CPU, an explaining worker), never on the drawing's path: the scored digits read by the
//! model it started from and by the run that held each out, MNIST's first test digits read by
//! the model it started from and by the model kept, and for a ViT one scored digit's attention
//! rollout and gradient relevance in both.

use std::rc::Rc;

use crate::analysis::reading::Reading;
use crate::data::{IMAGE_PIXELS, PersonalSet};
use crate::model::{HeadsOff, ModelConfig};
use crate::protocol::BackendKind;
use crate::web::explain::ExplainingWorker;
use crate::web::{AskError, DrawingError, DrawingWorker, LinkError};

/// Why a comparison was not made.
#[derive(Debug, thiserror::Error)]
pub enum ComparisonError {
    #[error(transparent)]
    NotStarted(#[from] LinkError),
    #[error(transparent)]
    Drawing(#[from] DrawingError),
    #[error(transparent)]
    Explaining(#[from] AskError),
    #[error("the reading came back the wrong size")]
    WrongSize,
}

/// MNIST test digits scored before and after: the first test chunk, which the drawing worker
/// fetches.
pub const SCORED_TEST_DIGITS: u32 = 2_500;
/// Digits read in one request, as the gallery reads them.
const READ_AT_ONCE: usize = 250;

/// A fine-tuned model and the digits of the set it scores (those its run held out).
pub struct Judge {
    pub weights: Rc<Vec<u8>>,
    pub scores: Vec<usize>,
}

/// What one side (before or after) reads.
pub struct Scores {
    /// The digit read in each scored digit, in the set's order.
    pub reads: Vec<u8>,
    pub right: usize,
    /// MNIST's first test digits read right, of how many.
    pub mnist: (u32, u32),
}

/// One scored digit as each side sees it.
pub struct DigitMaps {
    pub image: [u8; IMAGE_PIXELS],
    pub label: u8,
    /// What each side reads in it.
    pub read: [u8; 2],
    pub grid: usize,
    pub rollout: [Vec<f32>; 2],
    pub relevance: [Vec<f32>; 2],
}

pub struct Comparison {
    /// The run kept: the model to draw with.
    pub run: u64,
    pub weights: Vec<u8>,
    /// The folds that scored every digit, where they did (else a held-out part did).
    pub folds: Option<usize>,
    pub scored: usize,
    pub before: Scores,
    pub after: Scores,
    pub maps: Option<DigitMaps>,
}

/// The model `base` against the `judges` (on the digits each scores) and the model `kept`
/// (on MNIST); for a ViT, the first scored digit that fine-tuning set right (else the first)
/// explained by both.
pub async fn compare(
    (base, config): (&[u8], &ModelConfig),
    set: &PersonalSet,
    judges: &[Judge],
    (run, kept): (u64, Rc<Vec<u8>>),
    folds: Option<usize>,
) -> Result<Comparison, ComparisonError> {
    let mut scored: Vec<usize> = judges.iter().flat_map(|j| j.scores.clone()).collect();
    scored.sort_unstable();
    let images = |indices: &[usize]| -> Vec<[u8; IMAGE_PIXELS]> {
        indices.iter().map(|&i| set.images[i]).collect()
    };
    let labels: Vec<u8> = scored.iter().map(|&i| set.labels[i]).collect();
    let worker = DrawingWorker::spawn(BackendKind::Cpu)?;

    worker.load(base).await?;
    let before_reads = read(&worker, &images(&scored)).await?;
    let before_mnist = mnist(&worker).await?;
    let mut after_reads = vec![0; scored.len()];
    for judge in judges {
        worker.load(&judge.weights).await?;
        let reads = read(&worker, &images(&judge.scores)).await?;
        for (index, digit) in judge.scores.iter().zip(reads) {
            if let Ok(at) = scored.binary_search(index) {
                after_reads[at] = digit;
            }
        }
    }
    worker.load(&kept).await?;
    let after_mnist = mnist(&worker).await?;
    let right = |reads: &[u8]| reads.iter().zip(&labels).filter(|(r, l)| r == l).count();
    let before = Scores {
        right: right(&before_reads),
        reads: before_reads,
        mnist: before_mnist,
    };
    let after = Scores {
        right: right(&after_reads),
        reads: after_reads,
        mnist: after_mnist,
    };

    let set_right = (0..scored.len())
        .find(|&k| before.reads[k] != labels[k] && after.reads[k] == labels[k])
        .or((!scored.is_empty()).then_some(0));
    let judge_of = |index: usize| judges.iter().find(|j| j.scores.contains(&index));
    let maps = match (config.vit(), set_right) {
        (Some(vit), Some(k)) => {
            let image = set.images[scored[k]];
            let label = labels[k];
            let judge = judge_of(scored[k]).map_or(kept.clone(), |j| j.weights.clone());
            let mut rollouts = Vec::with_capacity(2);
            let mut relevances = Vec::with_capacity(2);
            let explaining = ExplainingWorker::spawn()?;
            for model in [base, &judge[..]] {
                worker.load(model).await?;
                rollouts.push(rollout(&worker, &image, config).await?);
                explaining.keep(model).await?;
                let explained = explaining
                    .explain(&image, BackendKind::Cpu, Some(label))
                    .await?;
                relevances.push(explained.relevance);
            }
            let pair = |mut two: Vec<Vec<f32>>| {
                let after = two.pop().unwrap_or_default();
                [two.pop().unwrap_or_default(), after]
            };
            Some(DigitMaps {
                image,
                label,
                read: [before.reads[k], after.reads[k]],
                grid: vit.grid_size(),
                rollout: pair(rollouts),
                relevance: pair(relevances),
            })
        }
        _ => None,
    };
    Ok(Comparison {
        run,
        weights: kept.to_vec(),
        folds,
        scored: scored.len(),
        before,
        after,
        maps,
    })
}

/// The digit the model loaded in `worker` reads in each of `images`.
async fn read(
    worker: &DrawingWorker,
    images: &[[u8; IMAGE_PIXELS]],
) -> Result<Vec<u8>, DrawingError> {
    let mut reads = Vec::with_capacity(images.len());
    for part in images.chunks(READ_AT_ONCE) {
        let part = worker.read(part).await?;
        reads.extend(part.into_iter().map(|(digit, _)| digit));
    }
    Ok(reads)
}

/// MNIST's first test digits the model loaded in `worker` reads right, of how many.
async fn mnist(worker: &DrawingWorker) -> Result<(u32, u32), DrawingError> {
    worker.score(SCORED_TEST_DIGITS).await
}

/// The attention rollout of `image` in the model loaded in `worker`.
async fn rollout(
    worker: &DrawingWorker,
    image: &[u8; IMAGE_PIXELS],
    config: &ModelConfig,
) -> Result<Vec<f32>, ComparisonError> {
    let packed = worker.classify(image, HeadsOff::default()).await?;
    Reading::from_packed(&packed, config)
        .map(|reading| reading.rollout)
        .ok_or(ComparisonError::WrongSize)
}
