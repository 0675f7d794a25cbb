//! Shards of a CPU step computed by helpers (the browser's other workers, `web/helper`): handed
//! over as bytes, computed on a model of the helper's own, handed back as bytes, they must give
//! the step the worker would have taken alone, bit for bit, for any number of helpers, and a
//! helper that fails or lies must cost nothing but the time.

use std::cell::{Cell, RefCell};
use std::future::{Future, ready};

use burn::module::Module;
use burn::tensor::Device;
use vitlab::data::Batch;
use vitlab::model::{Classifier, CnnConfig, ModelConfig, VitConfig};
use vitlab::protocol::{BytesError, PartsError};
use vitlab::train::{
    CpuWorkers, MAX_SHARDS, MIN_SHARD, Objective, OptimizerSettings, Shard, ShardHelper, ShardJob,
    ShardJobError, ShardsDone, Trainer, parameter_values, shards_of,
};

use crate::train::first_train_images;
use crate::{device, run_now, to_vec};

fn small_vit() -> ModelConfig {
    VitConfig::lab()
        .with_depth(2)
        .with_dim(32)
        .with_heads(4)
        .with_mlp_dim(64)
        .with_dropout(0.1)
        .into()
}

fn small_cnn() -> ModelConfig {
    CnnConfig::new()
        .with_widths(vec![4, 8])
        .with_hidden(16)
        .with_dropout(0.25)
        .into()
}

/// `config` and a model of it, the start of every run a test compares.
fn started(config: ModelConfig) -> (ModelConfig, Classifier) {
    let model = config.init(&device());
    (config, model)
}

/// What a helper does with a job.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Behaviour {
    /// Compute it as the browser's helper does: through bytes, on a model of its own.
    Honest,
    /// Compute jobs honestly until this one (counted from 1), then answer that it could not,
    /// as a helper that dies mid-run ends.
    FailAt(usize),
    /// Send back one gradient value too few.
    Truncate,
    /// Answer for other shards than it was asked for.
    OtherShards,
}

/// A helper in this process: each job goes through the bytes the workers exchange.
struct InProcess {
    config: ModelConfig,
    behaviour: Behaviour,
    jobs: Cell<usize>,
    given_up: RefCell<Option<ShardJobError>>,
}

impl InProcess {
    fn new(config: &ModelConfig, behaviour: Behaviour) -> Self {
        Self {
            config: config.clone(),
            behaviour,
            jobs: Cell::new(0),
            given_up: RefCell::new(None),
        }
    }

    fn honest(config: &ModelConfig, count: usize) -> Vec<Self> {
        (0..count)
            .map(|_| Self::new(config, Behaviour::Honest))
            .collect()
    }
}

impl ShardHelper for InProcess {
    fn is_ready(&self) -> bool {
        self.given_up.borrow().is_none()
    }

    fn hand_over(&self, job: ShardJob) -> impl Future<Output = Result<ShardsDone, ShardJobError>> {
        self.jobs.set(self.jobs.get() + 1);
        let (header, bytes) = job.into_parts();
        let header = serde_json::from_str(&serde_json::to_string(&header).unwrap()).unwrap();
        let outcome = ShardJob::from_parts(header, &bytes)
            .map_err(ShardJobError::from)
            .and_then(|job| {
                // A model of the helper's own: other random values, replaced by the job's.
                let model = self.config.init(&device()).train();
                job.run(model, &self.config, &device().autodiff())
            });
        let outcome = match (self.behaviour, outcome) {
            (Behaviour::FailAt(job), _) if self.jobs.get() >= job => {
                Err(ShardJobError::Damaged("no answer within 5 s".into()))
            }
            (Behaviour::Honest | Behaviour::FailAt(_), outcome) => outcome.map(|done| {
                let (header, bytes) = done.into_parts();
                let header = serde_json::from_str(&serde_json::to_string(&header).unwrap());
                ShardsDone::from_parts(header.unwrap(), &bytes).unwrap()
            }),
            (Behaviour::Truncate, outcome) => outcome.map(|mut done| {
                done.gradients.pop();
                done
            }),
            (Behaviour::OtherShards, outcome) => outcome.map(|mut done| {
                done.header.shards[0].shard.index += 1;
                done
            }),
        };
        ready(outcome)
    }

    fn give_up(&self, error: ShardJobError) {
        *self.given_up.borrow_mut() = Some(error);
    }
}

/// What a checkpoint holds of a trainer: every parameter's values and AdamW's moments, as bits.
fn state_bits(trainer: &Trainer) -> Vec<u32> {
    let mut values = parameter_values(trainer.model());
    for moments in trainer.moments().iter().flatten() {
        values.push(moments.time as f32);
        values.extend(to_vec(moments.first.clone()));
        values.extend(to_vec(moments.second.clone()));
    }
    values.into_iter().map(f32::to_bits).collect()
}

/// Trains `start` (a model of `config`) for `steps` steps of 64 images (4 shards), the same
/// seed and batches every time, with `helpers`; the state after each step.
fn train_with(
    (config, start): &(ModelConfig, Classifier),
    helpers: &[InProcess],
    steps: usize,
) -> Vec<Vec<u32>> {
    let set = first_train_images(160);
    let mut trainer = Trainer::new(
        start.clone(),
        config.clone(),
        OptimizerSettings {
            weight_decay: 0.01,
            label_smoothing: 0.1,
        },
        &device(),
    );
    trainer.seed = 5;
    (0..steps)
        .map(|step| {
            let first = step * 48 % 96;
            let indices: Vec<usize> = (first..first + 64).collect();
            let batch = set.batch(&indices, trainer.device());
            let output = run_now(trainer.step_with(&batch, 1e-3, helpers));
            let ready = helpers.iter().filter(|h| h.is_ready()).count();
            assert_eq!(
                output.workers,
                ready + 1,
                "the workers the step says took part"
            );
            state_bits(&trainer)
        })
        .collect()
}

#[test]
fn one_two_three_or_four_workers_train_the_same_checkpoint_bit_for_bit() {
    for config in [small_vit(), small_cnn()] {
        let start = started(config.clone());
        let steps = 20;
        let alone = train_with(&start, &[], steps);
        assert_ne!(alone[0], alone[steps - 1], "the model trained");
        for helpers in 1..=3 {
            let workers = InProcess::honest(&config, helpers);
            let shared = train_with(&start, &workers, steps);
            for (step, (alone, shared)) in alone.iter().zip(&shared).enumerate() {
                let differ = alone.iter().zip(shared).filter(|(a, b)| a != b).count();
                assert_eq!(
                    differ,
                    0,
                    "step {step}, {} workers, {config:?}",
                    helpers + 1
                );
            }
            for worker in &workers {
                assert_eq!(
                    worker.jobs.get(),
                    steps,
                    "every step handed each helper its shards"
                );
                assert!(worker.given_up.borrow().is_none());
            }
        }
    }
}

#[test]
fn a_helper_that_dies_mid_run_is_dropped_and_the_others_carry_on_with_the_same_results() {
    let start = started(small_vit());
    let steps = 8;
    let alone = train_with(&start, &[], steps);
    let mut workers = InProcess::honest(&start.0, 3);
    workers[1].behaviour = Behaviour::FailAt(4);
    let shared = train_with(&start, &workers, steps);
    assert_eq!(alone, shared);
    assert_eq!(workers[1].jobs.get(), 4, "no job after it was given up");
    assert!(workers[1].given_up.borrow().is_some());
    for worker in [&workers[0], &workers[2]] {
        assert_eq!(worker.jobs.get(), steps, "the others took a job every step");
        assert!(worker.given_up.borrow().is_none());
    }
}

#[test]
fn a_helper_that_fails_or_sends_a_damaged_or_other_answer_is_given_up_and_costs_nothing() {
    let start = started(small_vit());
    let alone = train_with(&start, &[], 3);
    for behaviour in [
        Behaviour::FailAt(1),
        Behaviour::Truncate,
        Behaviour::OtherShards,
    ] {
        let helper = [InProcess::new(&start.0, behaviour)];
        let helped = train_with(&start, &helper, 3);
        assert_eq!(alone, helped, "{behaviour:?}");
        assert_eq!(
            helper[0].jobs.get(),
            1,
            "{behaviour:?}: no job after it was given up"
        );
        let error = helper[0].given_up.borrow().clone().expect("given up");
        assert!(matches!(error, ShardJobError::Damaged(_)), "{error:?}");
    }
}

/// A batch of `images` training digits on the training device.
fn batch(images: usize) -> (Batch, Device) {
    let training = device().autodiff();
    let set = first_train_images(images);
    let indices: Vec<usize> = (0..images).collect();
    (set.batch(&indices, &training), training)
}

/// The second and fourth of the four shards of a batch of 37.
const ASKED: [Shard; 2] = [Shard { index: 1, of: 4 }, Shard { index: 3, of: 4 }];

fn job(config: &ModelConfig, images: usize) -> ShardJob {
    let (batch, training) = batch(images);
    let model = config.init(&training).train();
    let objective = Objective {
        smoothing: 0.0,
        teacher: None,
    };
    ShardJob::of(parameter_values(&model), &batch, objective, 3, &ASKED)
}

#[test]
fn a_job_holds_its_shards_and_damaged_or_mismatched_jobs_are_refused_by_name() {
    let config = small_vit();
    let job = job(&config, 37);
    // Shards of 37 at 0, 9, 18 and 27: the second holds 9 images, the fourth 10.
    let sizes: Vec<usize> = job.header.shards.iter().map(|s| s.labels.len()).collect();
    assert_eq!(sizes, [9, 10]);
    assert_eq!(job.header.shards[1].share, 10.0 / 37.0);
    assert_eq!(job.header.image, [1, 28, 28]);
    assert_eq!(job.images.len(), 19 * 28 * 28);
    assert_eq!(job.params.len(), config.num_params());
    let run = |job: ShardJob, config: &ModelConfig| {
        let model = config.init(&device()).train();
        job.run(model, config, &device().autodiff())
    };

    let (header, bytes) = job.clone().into_parts();
    let short = ShardJob::from_parts(header.clone(), &bytes[..bytes.len() - 4]);
    assert!(
        matches!(short, Err(PartsError::Bytes(BytesError::WrongCount { .. }))),
        "{short:?}"
    );
    let ragged = ShardJob::from_parts(header.clone(), &bytes[..bytes.len() - 1]);
    assert!(
        matches!(ragged, Err(PartsError::Bytes(BytesError::Ragged { .. }))),
        "{ragged:?}"
    );

    let other_model = small_cnn();
    let mismatch = run(job.clone(), &other_model);
    assert!(
        matches!(mismatch, Err(ShardJobError::WrongLength { .. })),
        "{mismatch:?}"
    );
    let mut bad_label = job.clone();
    bad_label.header.shards[1].labels[4] = 10;
    assert_eq!(
        run(bad_label, &config),
        Err(ShardJobError::BadLabel(10, 10))
    );
    let mut negative = job.clone();
    negative.header.shards[0].labels[0] = -1;
    assert_eq!(run(negative, &config), Err(ShardJobError::BadLabel(-1, 10)));
    for (share, smoothing) in [
        (0.0, 0.0),
        (1.5, 0.0),
        (f64::NAN, 0.0),
        (0.5, 1.0),
        (0.5, -0.1),
    ] {
        let mut odd = job.clone();
        (odd.header.shards[0].share, odd.header.smoothing) = (share, smoothing);
        assert!(matches!(
            run(odd, &config),
            Err(ShardJobError::OutOfRange { .. })
        ));
    }
    let shards_refused = |edit: fn(&mut ShardJob)| {
        let mut odd = job.clone();
        edit(&mut odd);
        matches!(run(odd, &config), Err(ShardJobError::BadShard(_)))
    };
    assert!(shards_refused(|job| job.header.shards[0].shard.index = 4));
    assert!(shards_refused(|job| job.header.shards[0].shard.index = 3));
    assert!(shards_refused(|job| {
        job.header.shards[0].shard = Shard { index: 1, of: 9 };
        job.header.shards[1].shard = Shard { index: 3, of: 9 };
    }));
    assert!(shards_refused(|job| job.header.shards[1].shard.of = 8));
    assert!(shards_refused(|job| job.header.shards.clear()));
    assert!(shards_refused(|job| {
        let images = job.header.shards[0].labels.len() * 28 * 28;
        job.header.shards[0].labels.clear();
        job.images.drain(..images);
    }));
    let mut few_labels = job.clone();
    few_labels.header.shards[1].labels.pop();
    assert!(matches!(
        run(few_labels, &config),
        Err(ShardJobError::Damaged(_))
    ));
    let mut wrong_side = job.clone();
    wrong_side.header.image = [1, 14, 56];
    assert!(matches!(
        run(wrong_side, &config),
        Err(ShardJobError::WrongImages { .. })
    ));

    let done = run(job, &config).expect("an honest job runs");
    let heads = &done.header.shards;
    assert_eq!(heads.len(), 2);
    assert!(heads.iter().all(|s| s.loss.is_finite() && s.loss > 0.0));
    assert!((0..=9).contains(&heads[0].correct) && (0..=10).contains(&heads[1].correct));
    assert_eq!(done.gradients.len(), 2 * config.num_params());
    let training = device().autodiff();
    let model = config.init(&training).train();
    let back =
        |done: ShardsDone, asked: &[Shard]| done.into_batch_gradients(&model, &training, asked);
    for cut in [1, config.num_params(), done.gradients.len()] {
        let mut short = done.clone();
        short.gradients.truncate(done.gradients.len() - cut);
        let error = back(short, &ASKED).err();
        assert!(
            matches!(error, Some(ShardJobError::Damaged(_))),
            "{error:?}"
        );
    }
    let mut long = done.clone();
    long.gradients.push(0.0);
    assert!(back(long, &ASKED).is_err());
    let mut fewer = done.clone();
    fewer.header.shards[0].present.pop();
    assert!(back(fewer, &ASKED).is_err());
    assert!(
        back(done.clone(), &ASKED[..1]).is_err(),
        "one shard asked, two answered"
    );
    assert!(
        back(done.clone(), &[ASKED[1], ASKED[0]]).is_err(),
        "out of order"
    );
    assert_eq!(back(done, &ASKED).map(|shards| shards.len()), Ok(2));
}

#[test]
fn the_workers_a_cpu_step_is_shared_by_follow_the_cores_the_memory_the_link_and_the_batch() {
    let machine = |cores, memory_gib, asked| CpuWorkers {
        cores,
        memory_gib,
        asked,
    };
    // One per core, the training worker's included; a batch of 128 has 8 shards, 64 has 4.
    assert_eq!(machine(2, None, None).helpers_for(64), 1);
    assert_eq!(machine(8, Some(8.0), None).helpers_for(128), 7);
    assert_eq!(machine(8, Some(8.0), None).helpers_for(64), 3);
    assert_eq!(
        machine(16, Some(8.0), None).helpers_for(512),
        7,
        "8 shards at most"
    );
    // Shards of 16 images at least: a batch of 48 has 3, one of 31 runs whole.
    assert_eq!(machine(8, None, None).for_batch(48), 3);
    assert_eq!(machine(8, None, None).for_batch(31), 1);
    // A phone short of memory starts fewer; a value that is no size counts for nothing.
    assert_eq!(machine(8, Some(4.0), None).for_batch(128), 4);
    assert_eq!(machine(8, Some(2.0), None).for_batch(128), 2);
    assert_eq!(machine(8, Some(0.5), None).for_batch(128), 1);
    assert_eq!(machine(8, Some(f64::NAN), None).for_batch(128), 8);
    assert_eq!(machine(0, None, None).for_batch(128), 1);
    // A link's count wins over the cores and the memory, never over the shards.
    assert_eq!(machine(2, Some(0.5), Some(4)).for_batch(64), 4);
    assert_eq!(machine(16, None, Some(1)).helpers_for(64), 0);
    assert_eq!(machine(2, None, Some(8)).for_batch(48), 3);
    assert_eq!(CpuWorkers::parse(" 3 "), Ok(3));
    for bad in ["0", "9", "-1", "two", "", "1.5"] {
        assert!(CpuWorkers::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(shards_of(8 * MIN_SHARD), MAX_SHARDS);
    assert_eq!(shards_of(2 * MIN_SHARD - 1), 1);
}
