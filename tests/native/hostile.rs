//! The hostile-input audit's findings, one named test each: every one was a panic, a memory
//! abort or a wrong success before the fix, and must stay a short, typed error.

use burn::module::Module;
use vitlab::data::{self, ChunkEntry, ChunkError, Manifest, MnistSet};
use vitlab::model::{Budget, CostError, ModelConfig, VitConfig};
use vitlab::train::TrainingPlan;
use vitlab::weights::{self, WeightsError};

use crate::cli::{VIT, refused};

/// A small valid file to damage.
fn weights_bytes() -> Vec<u8> {
    let config = VitConfig::seed()
        .with_depth(1)
        .with_dim(16)
        .with_heads(2)
        .with_mlp_dim(16);
    crate::fresh_weights(config.clone())
}

/// The file's JSON header and data section.
fn split(bytes: &[u8]) -> (serde_json::Value, Vec<u8>) {
    let length = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    (
        serde_json::from_slice(&bytes[8..8 + length]).unwrap(),
        bytes[8 + length..].to_vec(),
    )
}

fn join(header: &[u8], data: &[u8]) -> Vec<u8> {
    [&(header.len() as u64).to_le_bytes()[..], header, data].concat()
}

fn with_config(config_json: &str) -> Vec<u8> {
    let (mut header, data) = split(&weights_bytes());
    header["__metadata__"]["vitlab.config"] = config_json.into();
    join(&serde_json::to_vec(&header).unwrap(), &data)
}

#[test]
fn a_small_file_with_an_enormous_config_is_refused_before_anything_is_built() {
    // Depth in the millions at dim 1: a few hundred bytes that once aborted on allocation.
    let deep = r#"{"image_size":28,"channels":1,"patch_size":7,"dim":2,"depth":5000000,"heads":1,"mlp_dim":1,"dropout":0.0,"num_classes":10}"#;
    let error = weights::decode(&with_config(deep)).unwrap_err();
    assert!(
        matches!(error, WeightsError::Cost(CostError::OverBudget { .. })),
        "{error}"
    );
    // Fields whose parameter count overflows even wide arithmetic.
    let huge = format!(
        r#"{{"image_size":28,"channels":1,"patch_size":7,"dim":{m},"depth":{m},"heads":1,"mlp_dim":{m},"dropout":0.0,"num_classes":10}}"#,
        m = u64::MAX
    );
    let error = weights::decode(&with_config(&huge)).unwrap_err();
    assert!(
        matches!(error, WeightsError::Cost(CostError::Overflow)),
        "{error}"
    );
    // 3.8 million layers of width 1: 49 M parameters (under the 50 M cap) and little work per
    // image, but each layer is modules and tensors of its own: it ran `vit` out of memory.
    let narrow = r#"{"image_size":28,"channels":1,"patch_size":28,"dim":1,"depth":3800000,"heads":1,"mlp_dim":1,"dropout":0.0,"num_classes":10}"#;
    let config: VitConfig = serde_json::from_str(narrow).unwrap();
    assert!(config.cost().unwrap().params < Budget::PAGE.max_params);
    for budget in [Budget::PAGE, Budget::CLI] {
        let error = ModelConfig::from(config.clone())
            .check_budget(&budget, None)
            .unwrap_err();
        assert!(error.to_string().contains("layer count"), "{error}");
    }
    let error = weights::decode(&with_config(narrow)).unwrap_err();
    assert!(error.to_string().contains("layer count"), "{error}");
    // A CNN of as many one-channel convolutions.
    let mut cnn = vitlab::model::CnnConfig::seed();
    cnn.widths = vec![1; 3_800_000];
    let error = ModelConfig::from(cnn)
        .check_budget(&Budget::CLI, None)
        .unwrap_err();
    assert!(error.to_string().contains("layer count"), "{error}");
}

#[test]
fn models_the_page_cannot_afford_are_named_by_the_limit_they_pass() {
    // Patch 1: 785 tokens. Depth 2,000: 100 M parameters.
    for (config, limit) in [
        (VitConfig::seed().with_patch_size(1), "token count"),
        (VitConfig::seed().with_depth(2000), "parameter count"),
        (VitConfig::seed().with_patch_size(28), "analysis work"),
    ] {
        let error = ModelConfig::from(config.clone())
            .check_budget(&Budget::PAGE, None)
            .unwrap_err();
        assert!(error.to_string().contains(limit), "{config:?}: {error}");
        assert!(error.to_string().contains("the page"), "{error}");
    }
    // The command line affords patch 1 for inference, not a batch of 500 of its activations.
    let patch1 = ModelConfig::from(VitConfig::seed().with_patch_size(1));
    patch1.check_budget(&Budget::CLI, Some(1)).unwrap();
    let error = patch1.check_budget(&Budget::CLI, Some(500)).unwrap_err();
    assert!(error.to_string().contains("memory per batch"), "{error}");
    // What ships fits both.
    for plan in [TrainingPlan::seed(), TrainingPlan::lab()] {
        plan.validate().unwrap();
        plan.validate_within(&Budget::CLI).unwrap();
    }
}

#[test]
fn the_cost_counts_agree_with_the_model() {
    let config = VitConfig::lab();
    let cost = config.cost().unwrap();
    // Burn's own count of the built model's parameters.
    assert_eq!(
        cost.params,
        config.init(&crate::device()).num_params() as u64
    );
    assert_eq!(cost.tokens, 50);
    assert_eq!(cost.attention_bytes, 6 * 8 * 50 * 50 * 4);
    // 6 blocks of 4·T·D² + 2·T²·D + 2·T·D·M, the patch projection and the head.
    let block = 4 * 50 * 64 * 64 + 2 * 50 * 50 * 64 + 2 * 50 * 64 * 128;
    assert_eq!(cost.forward_macs, 6 * block + 49 * 16 * 64 + 64 * 10);
}

#[test]
fn plan_options_that_could_never_run_are_refused() {
    let mut plan = TrainingPlan::seed();
    for warmup in [f64::NAN, f64::INFINITY, -1.0, 11.0] {
        plan.warmup_epochs = Some(warmup);
        let error = plan.validate().unwrap_err().to_string();
        assert!(error.contains("warm-up"), "{warmup}: {error}");
    }
    plan = TrainingPlan::seed();
    plan.epochs = usize::MAX;
    assert!(plan.validate().unwrap_err().to_string().contains("epochs"));
    plan = TrainingPlan::seed();
    plan.batch_size = usize::MAX;
    assert!(plan.validate().unwrap_err().to_string().contains("batch"));
}

#[test]
fn duplicate_names_gaps_overlaps_and_trailing_bytes_are_refused() {
    let bytes = weights_bytes();
    let (header, data) = split(&bytes);
    let text = serde_json::to_string(&header).unwrap();

    // The same tensor named twice: a map would have kept one silently.
    let entry = format!(r#""head.bias":{}"#, header["head.bias"]);
    let twice = text.replacen('{', &format!("{{{entry},"), 1);
    let error = weights::decode(&join(twice.as_bytes(), &data)).unwrap_err();
    assert!(error.to_string().contains("named twice"), "{error}");

    // Bytes after the last tensor.
    let trailing = [&bytes[..], &[0u8; 8]].concat();
    let error = weights::decode(&trailing).unwrap_err();
    assert!(matches!(error, WeightsError::Layout(_)), "{error}");

    // Two tensors of one size swapped onto the same bytes: an overlap and a gap.
    let mut overlapping = header.clone();
    overlapping["layers.0.norm1.bias"]["data_offsets"] =
        overlapping["layers.0.norm1.weight"]["data_offsets"].clone();
    let error =
        weights::decode(&join(&serde_json::to_vec(&overlapping).unwrap(), &data)).unwrap_err();
    assert!(matches!(error, WeightsError::Layout(_)), "{error}");

    // A header length a few bytes off.
    for shift in [-3i64, 5] {
        let length = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as i64 + shift;
        let mut shifted = bytes.clone();
        shifted[..8].copy_from_slice(&(length as u64).to_le_bytes());
        assert!(
            weights::decode(&shifted).is_err(),
            "header length {shift:+}"
        );
    }
}

#[test]
fn error_messages_stay_short_whatever_the_file_holds() {
    let (header, data) = split(&weights_bytes());
    // A thousand unexpected tensors with names of 10,000 characters.
    let mut many = header.clone();
    let object = many.as_object_mut().unwrap();
    for i in 0..1000 {
        object.insert(
            format!("{}{i}", "x".repeat(10_000)),
            object["head.bias"].clone(),
        );
    }
    let error = weights::decode(&join(&serde_json::to_vec(&many).unwrap(), &data)).unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, WeightsError::Mismatch(_)), "{text}");
    assert!(
        text.len() < 1000 && text.contains("and 995 more"),
        "{} bytes",
        text.len()
    );
    // A shape that is a megabyte of text, which the JSON parser quotes back.
    let mut shaped = header;
    shaped["head.weight"]["shape"] = "y".repeat(1 << 20).into();
    let error = weights::decode(&join(&serde_json::to_vec(&shaped).unwrap(), &data)).unwrap_err();
    assert!(
        error.to_string().len() < 1000,
        "{} bytes",
        error.to_string().len()
    );
}

fn chunk_entry(bytes: &[u8], items: usize) -> ChunkEntry {
    ChunkEntry {
        file: "train-000.bin".into(),
        items,
        bytes: bytes.len(),
        sha256: data::sha256_hex(bytes),
    }
}

/// A chunk's raw layout, compressed, with any item count in its header.
fn raw_chunk(count: u32, body: &[u8]) -> Vec<u8> {
    let mut raw = data::CHUNK_MAGIC.to_vec();
    raw.extend_from_slice(&count.to_le_bytes());
    raw.extend_from_slice(&28u16.to_le_bytes());
    raw.extend_from_slice(&0u16.to_le_bytes());
    raw.extend_from_slice(body);
    miniz_oxide::deflate::compress_to_vec(&raw, 6)
}

#[test]
fn a_chunk_whose_count_would_wrap_32_bit_arithmetic_is_refused() {
    // 12 + count·785 wraps to a small length in 32 bits: once a slice out of range.
    let count = ((u32::MAX as u64 + 1) / 785 + 1) as u32;
    let bytes = raw_chunk(count, &[0; 785]);
    let error = data::decode_chunk_unverified(&bytes).unwrap_err();
    assert!(matches!(error, ChunkError::TooMany(_)), "{error}");
    // And a chunk that inflates past what its listed count needs stops inflating there.
    let bomb = miniz_oxide::deflate::compress_to_vec(&vec![0u8; 32 << 20], 6);
    let error = data::decode_chunk(&bomb, &chunk_entry(&bomb, 1)).unwrap_err();
    assert!(error.to_string().contains("more than"), "{error}");
}

fn manifest_json(train: Vec<ChunkEntry>, test: Vec<ChunkEntry>) -> String {
    serde_json::to_string(&Manifest {
        format: data::MANIFEST_FORMAT.into(),
        image_side: 28,
        train,
        test,
    })
    .unwrap()
}

#[test]
fn manifests_that_repeat_a_chunk_list_too_much_or_leave_a_split_empty_are_refused() {
    let set = MnistSet {
        images: vec![0; 784],
        labels: vec![3],
    };
    let bytes = data::encode_chunk(&set);
    let entry = chunk_entry(&bytes, 1);
    let test = ChunkEntry {
        file: "test-000.bin".into(),
        ..entry.clone()
    };
    Manifest::parse(&manifest_json(vec![entry.clone()], vec![test.clone()])).unwrap();

    let twice = manifest_json(vec![entry.clone(), entry.clone()], vec![test.clone()]);
    assert!(
        Manifest::parse(&twice)
            .unwrap_err()
            .to_string()
            .contains("twice")
    );

    let no_test = manifest_json(vec![entry.clone()], vec![]);
    assert!(
        Manifest::parse(&no_test)
            .unwrap_err()
            .to_string()
            .contains("no test images")
    );

    // One small chunk that inflates to 64 MiB, listed under 200 names.
    let many: Vec<ChunkEntry> = (0..200)
        .map(|i| ChunkEntry {
            file: format!("train-{i}.bin"),
            items: 80_000,
            ..entry.clone()
        })
        .collect();
    let error = Manifest::parse(&manifest_json(many, vec![test.clone()])).unwrap_err();
    assert!(error.to_string().contains("images"), "{error}");

    let endless: Vec<ChunkEntry> = (0..Manifest::MAX_CHUNKS + 1)
        .map(|i| ChunkEntry {
            file: format!("train-{i}.bin"),
            ..entry.clone()
        })
        .collect();
    let error = Manifest::parse(&manifest_json(endless, vec![test])).unwrap_err();
    assert!(error.to_string().contains("chunks"), "{error}");
}

/// A damage done to a saved value, with a word its refusal must contain.
type Edit<T> = (&'static str, fn(&mut T));

#[test]
fn cli_options_that_once_panicked_or_ran_forever_are_refused() {
    let out = std::env::temp_dir().join(format!("vitlab-hostile-{}", std::process::id()));
    let out = out.to_str().unwrap();
    for warmup in ["NaN", "inf", "-1"] {
        let option = format!("--warmup-epochs={warmup}");
        let stderr = refused(&["train", &option, "--out", out]);
        assert!(stderr.contains("warm-up"), "{warmup}: {stderr}");
    }
    let stderr = refused(&["train", "--limit", "0", "--out", out]);
    assert!(stderr.contains("at least 1"), "{stderr}");
    let stderr = refused(&["train", "--epochs", "18446744073709551615", "--out", out]);
    assert!(stderr.contains("epochs"), "{stderr}");
    let stderr = refused(&[
        "train",
        "--patch-size",
        "1",
        "--batch-size",
        "500",
        "--out",
        out,
    ]);
    assert!(stderr.contains("memory per batch"), "{stderr}");
    let stderr = refused(&["bench", "--inferences", "0"]);
    assert!(stderr.contains("--inferences"), "{stderr}");
    let stderr = refused(&["bench", "--batch-size", "5000"]);
    assert!(stderr.contains("first training chunk"), "{stderr}");
    assert!(!std::path::Path::new(out).exists());
}

#[test]
fn a_damaged_checkpoint_is_refused_by_name() {
    let out =
        std::env::temp_dir().join(format!("vitlab-badckpt-{}.safetensors", std::process::id()));
    let ckpt = std::path::PathBuf::from(format!("{}.ckpt", out.display()));
    let train = |epochs: &str, resume: bool| {
        let mut command = std::process::Command::new(VIT);
        command
            .args([
                "train", "--depth", "1", "--limit", "128", "--epochs", epochs, "--out",
            ])
            .arg(&out);
        if resume {
            command.arg("--resume");
        }
        command
    };
    assert!(train("1", false).status().unwrap().success());
    let good =
        vitlab::train::Checkpoint::decode(&std::fs::read(&ckpt).unwrap(), &Budget::CLI).unwrap();
    // The run state as the file holds it: JSON in the metadata, edited as a hostile file
    // would be, beside the weights and moments of the real run.
    let edits: [Edit<serde_json::Value>; 4] = [
        ("heads", |state| state["plan"]["config"]["heads"] = 5.into()),
        ("counters", |state| state["step"] = u64::MAX.into()),
        ("parameter count", |state| {
            state["plan"]["config"]["depth"] = 100_000.into()
        }),
        ("pass over the data", |state| {
            state["pass_left"] = serde_json::json!([1_000_000])
        }),
    ];
    for (expected, edit) in edits {
        let mut state = serde_json::to_value(&good.state).unwrap();
        edit(&mut state);
        let bytes = hostile_checkpoint(&good, &state);
        std::fs::write(&ckpt, bytes).unwrap();
        let output = train("2", true).output().unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(1), "{expected}: {stderr}");
        assert!(
            stderr.contains(expected) || stderr.contains("out of range"),
            "{expected}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    std::fs::remove_file(&out).unwrap();
    std::fs::remove_file(ckpt).unwrap();
}

/// `checkpoint`'s bytes with `state` as its run state, whatever it says.
fn hostile_checkpoint(
    checkpoint: &vitlab::train::Checkpoint,
    state: &serde_json::Value,
) -> Vec<u8> {
    let mut tensors = checkpoint.weights.tensors.clone();
    let moments = checkpoint.moments.as_ref().unwrap();
    let prefixed = |prefix: &str, list: &[weights::NamedTensor]| {
        list.iter()
            .map(|t| weights::NamedTensor {
                name: format!("{prefix}{}", t.name),
                ..t.clone()
            })
            .collect::<Vec<_>>()
    };
    tensors.extend(prefixed("optimizer.exp_avg.", &moments.first));
    tensors.extend(prefixed("optimizer.exp_avg_sq.", &moments.second));
    weights::encode_with(
        &checkpoint.weights.config,
        &[
            (vitlab::train::SESSION_KEY, state.to_string()),
            (
                vitlab::train::ADAM_TIMES_KEY,
                serde_json::to_string(&moments.times).unwrap(),
            ),
        ],
        &tensors,
    )
}

#[test]
fn a_saved_run_that_does_not_validate_says_why_instead_of_panicking() {
    let session =
        vitlab::train::Session::new(TrainingPlan::seed(), 60_000, &crate::device()).unwrap();
    let good = session.state();
    assert_eq!(good.summary().unwrap().total_steps, 10 * 938);
    let edits: [Edit<vitlab::train::SessionState>; 5] = [
        ("batch size", |state| state.plan.batch_size = 0),
        ("image count", |state| state.train_items = usize::MAX),
        ("counters", |state| state.step = usize::MAX),
        ("counters", |state| state.seconds = f64::NAN),
        ("heads", |state| {
            state.plan.config.vit_mut().unwrap().heads = 5
        }),
    ];
    for (expected, edit) in edits {
        let mut state = good.clone();
        edit(&mut state);
        let problem = state.summary().unwrap_err().to_string();
        assert!(problem.contains(expected), "{expected}: {problem}");
    }
}
