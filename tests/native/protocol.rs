//! What the page and its workers say to each other (`vitlab::protocol`): every message reads
//! back as it was written, answers name the request they answer, each worker's greeting is
//! known, and the bytes beside a message hold exactly the values they announce.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt::Debug;

use vitlab::analysis::inference::{CnnInsight, ModelInsight, WeightInsight};
use vitlab::data::IMAGE_PIXELS;
use vitlab::model::{CnnConfig, HeadsOff, ModelConfig, Replacement, VitConfig};
use vitlab::protocol::{
    BUILD, BackendKind, BytesError, Called, DataProgress, DeviceNote, FromDrawing, FromExplainer,
    FromHelper, FromTrainer, Greeting, NonFinite, PartsError, Reply, RunState, ToDrawing,
    ToExplainer, ToHelper, ToTrainer, TrainerFailure, WeightsPurpose, bytes_to_floats,
    bytes_to_images, floats_to_bytes, images_to_bytes,
};
use vitlab::train::{
    History, Shard, ShardDoneHeader, ShardJob, ShardJobError, ShardJobHeader, ShardPart,
    ShardsDone, ShardsDoneHeader, TrainingPlan,
};

/// `message` through JSON, as a packet carries it.
fn round_trip<M: Serialize + DeserializeOwned + PartialEq + Debug>(message: &M) {
    let json = serde_json::to_string(message).unwrap();
    let back: M = serde_json::from_str(&json).unwrap();
    assert_eq!(&back, message, "{json}");
}

#[test]
fn every_message_to_and_from_the_training_worker_reads_back_as_written() {
    let plan = TrainingPlan::seed();
    for message in [
        ToTrainer::Start {
            plan: plan.clone(),
            backend: Some(BackendKind::Cpu),
            run: 1_733_000_000_000,
        },
        ToTrainer::Continue {
            backend: Some(BackendKind::WebGpu),
            run: u64::MAX,
        },
        ToTrainer::Pause,
        ToTrainer::Resume,
        ToTrainer::Stop,
        ToTrainer::Reset,
        ToTrainer::ExportWeights {
            purpose: WeightsPurpose::Download,
        },
        ToTrainer::ExportRun,
        ToTrainer::Drawing {
            image: Some(vec![7; 784]),
        },
        ToTrainer::CellDigits {
            label: 3,
            predicted: 5,
        },
    ] {
        round_trip(&message);
        assert_eq!(message.called(), "a command");
    }
    for message in [
        FromTrainer::Listening {
            build: BUILD.to_string(),
        },
        FromTrainer::Checkpoint {
            run: 9,
            step: 40,
            rest: None,
            weights_at: None,
        },
        FromTrainer::Checkpoint {
            run: (1 << 53) - 1,
            step: 41,
            rest: Some(RunState::Stopped),
            weights_at: Some(1_000),
        },
        FromTrainer::Started {
            backend: BackendKind::Cpu,
            note: Some(DeviceNote::CpuFaster {
                cpu_ms: 40.0,
                gpu_ms: 90.0,
            }),
            plan,
            history: History::default(),
        },
        FromTrainer::State {
            state: RunState::Paused,
        },
        FromTrainer::Workers { count: 2 },
        FromTrainer::Data(DataProgress {
            chunks: 1,
            total_chunks: 4,
            bytes: 10,
            total_bytes: 40,
            images: 100,
            total_images: 400,
            cached_chunks: 1,
        }),
        FromTrainer::Samples {
            images: vec![vec![0; 784]],
            labels: vec![4],
        },
        FromTrainer::Notice {
            message: "Retrying".into(),
            warning: false,
        },
        FromTrainer::Weights {
            purpose: WeightsPurpose::Download,
        },
        FromTrainer::RunFile { step: 40 },
        FromTrainer::Failed(TrainerFailure::Device {
            backend: BackendKind::Cpu,
            why: "out of memory".into(),
            saved: Some(40),
        }),
        FromTrainer::Failed(TrainerFailure::Diverged {
            step: 7,
            loss: NonFinite::Infinite,
            back_to: None,
        }),
        FromTrainer::Failed(TrainerFailure::Diverged {
            step: 8,
            loss: NonFinite::of(f32::NAN).unwrap(),
            back_to: Some(5),
        }),
        FromTrainer::Failed(TrainerFailure::Unresumable("a damaged header".into())),
    ] {
        round_trip(&message);
        assert_eq!(
            message.greeting(),
            matches!(message, FromTrainer::Listening { .. }).then_some(BUILD),
            "{message:?}"
        );
    }
}

#[test]
fn a_loss_that_is_not_a_number_crosses_as_json_can_carry_it_and_reads_as_rust_prints_it() {
    for (value, said) in [
        (f32::NAN, "NaN"),
        (f32::INFINITY, "inf"),
        (-f32::INFINITY, "-inf"),
    ] {
        let loss = NonFinite::of(value).unwrap();
        assert_eq!(loss.to_string(), said);
        assert_eq!(loss.to_string(), format!("{value}"));
        round_trip(&loss);
    }
    assert_eq!(NonFinite::of(2.5), None);
    assert_eq!(NonFinite::of(f32::MAX), None);
}

#[test]
fn the_drawing_workers_messages_read_back_as_written_and_a_failure_is_a_fault() {
    for request in [
        ToDrawing::Load,
        ToDrawing::Classify {
            off: HeadsOff::new([(1, 2)], Replacement::Zero),
        },
        ToDrawing::Distances { first: 8, count: 8 },
        ToDrawing::TestDigit { index: None },
        ToDrawing::TestDigit { index: Some(2_499) },
    ] {
        round_trip(&request);
        assert_eq!(request.called(), "a request");
    }
    let config = VitConfig::lab();
    let insight = ModelInsight::Vit(
        config.clone(),
        WeightInsight {
            position_similarity: vec![1.0, -0.25, -0.25, 1.0],
            filter_components: vec![(vec![0.5, -0.5], 0.75)],
        },
    );
    let cnn = ModelInsight::Cnn(CnnInsight {
        filters: vec![vec![0.0; 9]; 2],
        kernel_size: 3,
        receptive_fields: vec![3, 8, 18],
    });
    let answers = [
        (
            FromDrawing::Listening {
                build: BUILD.to_string(),
            },
            false,
        ),
        (
            FromDrawing::Loaded {
                config: ModelConfig::from(config),
                insight,
            },
            false,
        ),
        (
            FromDrawing::Loaded {
                config: ModelConfig::Cnn {
                    cnn: CnnConfig::seed(),
                },
                insight: cnn,
            },
            false,
        ),
        (FromDrawing::Classified, false),
        (
            FromDrawing::Distances {
                values: vec![vec![1.5, 2.0], vec![0.25]],
            },
            false,
        ),
        (
            FromDrawing::TestDigit {
                index: 17,
                label: 4,
            },
            false,
        ),
        (
            FromDrawing::Refused {
                message: "no model is loaded".into(),
            },
            false,
        ),
        (
            FromDrawing::Failed {
                message: "the device was lost".into(),
            },
            true,
        ),
    ];
    for (answer, fault) in answers {
        round_trip(&answer);
        assert_eq!(answer.fault().is_some(), fault, "{answer:?}");
        assert_eq!(
            answer.greeting(),
            matches!(answer, FromDrawing::Listening { .. }).then_some(BUILD)
        );
    }
}

#[test]
fn the_explaining_workers_messages_read_back_as_written_and_a_failure_is_a_fault() {
    for request in [
        ToExplainer::Keep,
        ToExplainer::Explain {
            backend: BackendKind::WebGpu,
            class: Some(7),
        },
        ToExplainer::Explain {
            backend: BackendKind::Cpu,
            class: None,
        },
        ToExplainer::KeepCnn,
        ToExplainer::Compare {
            backend: BackendKind::Cpu,
            hidden: vec![0, 24, 48],
        },
        ToExplainer::Curves {
            backend: BackendKind::WebGpu,
            images: 200,
        },
    ] {
        round_trip(&request);
        assert_eq!(request.called(), "a request");
    }
    let answers = [
        FromExplainer::Listening {
            build: BUILD.to_string(),
        },
        FromExplainer::Kept,
        FromExplainer::Explained {
            explanation: vitlab::analysis::explanation::Explanation {
                class: 3,
                relevance: vec![0.0, 0.5, 0.25, 1.0],
                lens: vec![vec![0.1, 0.9], vec![0.6, 0.4]],
            },
        },
        FromExplainer::Compared {
            comparison: vitlab::analysis::occlusion::Comparison {
                vit: vec![0.25, 0.75],
                vit_dropped: vec![0.5, 0.5],
                cnn: vec![1.0, 0.0],
            },
        },
        FromExplainer::Curves {
            curves: vitlab::analysis::occlusion::OcclusionCurves {
                grid: 7,
                images: 2,
                fractions: vec![0.0, 0.5],
                vit_random: vec![1.0, 0.5],
                vit_relevant: vec![1.0, 0.0],
                cnn_random: vec![1.0, 0.5],
                cnn_relevant: vec![1.0, 0.0],
                vit_dropped_random: vec![1.0, 0.75],
                vit_dropped_relevant: vec![1.0, 0.25],
            },
        },
        FromExplainer::Failed {
            message: "no weights to explain with".into(),
        },
    ];
    for answer in answers {
        round_trip(&answer);
        assert_eq!(
            answer.fault().is_some(),
            matches!(answer, FromExplainer::Failed { .. })
        );
        assert_eq!(
            answer.greeting(),
            matches!(answer, FromExplainer::Listening { .. }).then_some(BUILD)
        );
    }
}

/// A job of two shards (the second and fourth of four) of `images` images each.
fn job_header(params: usize, images: usize) -> ShardJobHeader {
    let part = |index| ShardPart {
        shard: Shard { index, of: 4 },
        share: 0.25,
        labels: vec![3; images],
    };
    ShardJobHeader {
        stream: 42,
        smoothing: 0.1,
        params,
        image: [1, 2, 2],
        shards: vec![part(1), part(3)],
    }
}

#[test]
fn the_helper_greets_then_answers_and_its_messages_read_back_as_written() {
    let setup = ToHelper::Setup {
        config: ModelConfig::from(vitlab::model::VitConfig::seed()),
    };
    round_trip(&setup);
    assert_eq!(setup.called(), "its setup");
    let job = ToHelper::Job(job_header(3, 2));
    round_trip(&job);
    assert_eq!(job.called(), "a job");
    let done = FromHelper::Done(ShardsDoneHeader {
        shards: vec![ShardDoneHeader {
            shard: Shard { index: 5, of: 8 },
            loss: 0.5,
            correct: 1,
            present: vec![true, false],
        }],
    });
    for message in [
        FromHelper::Listening {
            build: BUILD.to_string(),
        },
        FromHelper::Built,
        done,
        FromHelper::Failed {
            message: "a job came before the model was set up".into(),
        },
    ] {
        round_trip(&message);
        assert_eq!(
            message.greeting(),
            matches!(message, FromHelper::Listening { .. }).then_some(BUILD)
        );
    }
}

#[test]
fn floats_travel_as_little_endian_bytes_and_come_back_bit_for_bit() {
    let values = [0.0, -0.0, 1.5, f32::MIN_POSITIVE, f32::NAN, f32::INFINITY];
    let bytes = floats_to_bytes(&values);
    assert_eq!(bytes.len(), 4 * values.len());
    assert_eq!(&bytes[8..12], &1.5f32.to_le_bytes());
    let back = bytes_to_floats(&bytes);
    let bits = |v: &[f32]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&back), bits(&values));
    // Trailing bytes that make no whole float are dropped.
    assert_eq!(bits(&bytes_to_floats(&bytes[..5])), bits(&values[..1]));
    assert!(bytes_to_floats(&[]).is_empty());
}

#[test]
fn images_travel_as_their_pixels_and_only_whole_announced_images_come_back() {
    let images: Vec<[u8; IMAGE_PIXELS]> = (0..3u8).map(|i| [i; IMAGE_PIXELS]).collect();
    let bytes = images_to_bytes(&images);
    assert_eq!(bytes.len(), 3 * IMAGE_PIXELS);
    assert_eq!(bytes_to_images(&bytes, 3), Some(images.clone()));
    assert_eq!(
        bytes_to_images(&bytes[..IMAGE_PIXELS], 1),
        Some(images[..1].to_vec())
    );
    // Not the count announced, a part of an image, none at all, or a count that overflows.
    assert_eq!(bytes_to_images(&bytes, 2), None);
    assert_eq!(bytes_to_images(&bytes[1..], 3), None);
    assert_eq!(bytes_to_images(&[], 0), None);
    assert_eq!(bytes_to_images(&bytes, usize::MAX), None);
}

#[test]
fn a_job_and_its_reply_come_back_from_their_bytes_and_damaged_bytes_are_refused_by_name() {
    // Two shards of two images of 2×2 pixels: 16 values after the 3 parameters.
    let job = ShardJob {
        header: job_header(3, 2),
        params: vec![1.0, 2.0, 3.0],
        images: (0..16).map(|i| i as f32 / 16.0).collect(),
    };
    let (header, bytes) = job.clone().into_parts();
    assert_eq!(bytes.len(), 4 * (3 + 16));
    assert_eq!(ShardJob::from_parts(header.clone(), &bytes), Ok(job));

    let ragged = ShardJob::from_parts(header.clone(), &bytes[..bytes.len() - 1]);
    assert_eq!(
        ragged,
        Err(PartsError::Bytes(BytesError::Ragged {
            what: "the job's bytes",
            bytes: 75,
        }))
    );
    let short = ShardJob::from_parts(header.clone(), &bytes[..bytes.len() - 4]);
    assert_eq!(
        short.unwrap_err().to_string(),
        "the job's bytes: 18 values where the model has 19"
    );
    let mut huge = header.clone();
    huge.image = [usize::MAX, 2, 2];
    assert_eq!(
        ShardJob::from_parts(huge, &bytes),
        Err(PartsError::Uncountable(4, [usize::MAX, 2, 2]))
    );
    let mut many = header;
    many.params = usize::MAX - 8;
    assert!(matches!(
        ShardJob::from_parts(many, &bytes),
        Err(PartsError::Uncountable(4, _))
    ));

    let done = ShardsDone {
        header: ShardsDoneHeader {
            shards: vec![ShardDoneHeader {
                shard: Shard { index: 0, of: 2 },
                loss: 0.25,
                correct: 2,
                present: vec![true, false, true],
            }],
        },
        gradients: vec![0.5, -0.5],
    };
    let (header, bytes) = done.clone().into_parts();
    assert_eq!(ShardsDone::from_parts(header.clone(), &bytes), Ok(done));
    // A damaged reply is one more way the helper failed, with the same words.
    let error = ShardsDone::from_parts(header, &bytes[..3]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the gradients' bytes: 3 bytes are not whole 4-byte floats"
    );
    assert_eq!(
        ShardJobError::from(error),
        ShardJobError::Damaged("the gradients' bytes: 3 bytes are not whole 4-byte floats".into())
    );
}

/// The build a greeting names is the sources' hash (`build.rs`): sixteen hex digits, the same
/// in every worker of one build, so the page can refuse a worker of another.
#[test]
fn the_build_is_named_by_the_sources_hash() {
    assert_eq!(BUILD.len(), 16, "{BUILD}");
    assert!(BUILD.chars().all(|c| c.is_ascii_hexdigit()), "{BUILD}");
    let greeting = FromTrainer::Listening {
        build: "another-build".to_string(),
    };
    assert_ne!(greeting.greeting(), Some(BUILD));
}
