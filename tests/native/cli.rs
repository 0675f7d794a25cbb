use std::process::Command;

use vitlab::model::Budget;
use vitlab::train::Checkpoint;

pub const VIT: &str = env!("CARGO_BIN_EXE_vit");
const PARITY_WEIGHTS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/parity.safetensors"
);

/// Runs `vit`; its standard output, after asserting that it succeeded.
fn vit(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// What the model card says of one shipped file: its correct count and confusion matrix.
fn card_figures(file: &str) -> (u64, Vec<Vec<u64>>) {
    let card =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/pretrained/README.md"))
            .unwrap();
    let section = card
        .split("\n## ")
        .find(|section| section.starts_with(&format!("`{file}`")))
        .unwrap_or_else(|| panic!("the card has no section for {file}"));
    let number = |text: &str| text.trim().replace(',', "").parse::<u64>().unwrap();
    let accuracy_row = section
        .lines()
        .find(|line| line.starts_with("| test accuracy |"))
        .unwrap();
    // "| test accuracy | **99.44 %** (9,944 / 10,000) |"
    let correct = number(
        accuracy_row
            .split('(')
            .nth(1)
            .unwrap()
            .split('/')
            .next()
            .unwrap(),
    );
    let confusion = (0..10)
        .map(|digit| {
            let row = section
                .lines()
                .find(|line| line.starts_with(&format!("| **{digit}** |")))
                .unwrap();
            row.split('|')
                .skip(2)
                .filter(|cell| !cell.trim().is_empty())
                .map(number)
                .collect()
        })
        .collect();
    (correct, confusion)
}

/// The model card's figures are what `vit eval` says of each shipped file, to the image.
#[test]
fn eval_reproduces_the_model_card_for_every_shipped_file() {
    for file in [
        "vit-seed.safetensors",
        "vit-lab.safetensors",
        "cnn-teacher.safetensors",
    ] {
        let weights = format!("{}/pretrained/{file}", env!("CARGO_MANIFEST_DIR"));
        let stdout = vit(Command::new(VIT).args(["eval", "--weights", &weights, "--json"]));
        let summary: serde_json::Value =
            serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
        let (correct, confusion) = card_figures(file);
        assert_eq!(summary["examples"], 10_000);
        assert_eq!(summary["correct"], correct, "{file}");
        assert_eq!(summary["confusion"], serde_json::json!(confusion), "{file}");
        let accuracy = summary["accuracy"].as_f64().unwrap();
        assert!(
            (accuracy - correct as f64 / 1e4).abs() < 1e-9,
            "{file}: {accuracy}"
        );
    }
}

#[test]
fn eval_names_a_corrupt_weights_file_and_fails() {
    let path =
        std::env::temp_dir().join(format!("vitlab-corrupt-{}.safetensors", std::process::id()));
    let bytes = std::fs::read(PARITY_WEIGHTS).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
    let output = Command::new(VIT)
        .arg("eval")
        .arg("--weights")
        .arg(&path)
        .output()
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("truncated or corrupt"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn train_runs_and_lowers_the_loss() {
    let out = std::env::temp_dir().join(format!("vitlab-train-{}.safetensors", std::process::id()));
    let stdout = vit(Command::new(VIT)
        .args([
            "train", "--preset", "seed", "--depth", "2", "--epochs", "3", "--limit", "1024",
        ])
        .args([
            "--batch-size",
            "64",
            "--lr",
            "2e-3",
            "--keep-last",
            "2",
            "--out",
        ])
        .arg(&out));
    let losses: Vec<f64> = stdout
        .lines()
        .filter_map(|line| line.split("train loss ").nth(1))
        .map(|rest| rest.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(losses.len(), 3, "{stdout}");
    assert!(losses[2] < 0.8 * losses[0], "{losses:?}");
    let last_test: f64 = stdout
        .lines()
        .filter_map(|line| line.split("test acc ").nth(1))
        .map(|rest| rest.split('%').next().unwrap().parse().unwrap())
        .next_back()
        .unwrap();
    // 3 epochs of 1,024 digits: far past chance (10 %) on the 10,000 test digits.
    assert!(last_test > 50.0, "{stdout}");
    let saved = std::fs::read(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    let file = vitlab::weights::decode(&saved).unwrap();
    assert_eq!(file.config.vit().unwrap().depth, 2);

    // --keep-last 2 kept epochs 2 and 3 (the last is the final weights), not epoch 1.
    let kept = |epoch: usize| {
        out.with_file_name(format!(
            "vitlab-train-{}.epoch{epoch}.safetensors",
            std::process::id()
        ))
    };
    assert!(!kept(1).exists());
    assert_eq!(std::fs::read(kept(3)).unwrap(), saved);
    let averaged = out.with_extension("mean.safetensors");
    vit(Command::new(VIT)
        .args(["average", "--out"])
        .arg(&averaged)
        .arg(kept(2))
        .arg(kept(3)));
    let decode =
        |path: &std::path::Path| vitlab::weights::decode(&std::fs::read(path).unwrap()).unwrap();
    let (second, third, mean) = (decode(&kept(2)), decode(&kept(3)), decode(&averaged));
    for path in [kept(2), kept(3), averaged] {
        std::fs::remove_file(path).unwrap();
    }
    assert_eq!(mean.config, file.config);
    let head = |file: &vitlab::weights::WeightsFile| {
        file.tensors
            .iter()
            .find(|t| t.name == "head.weight")
            .unwrap()
            .values
            .clone()
    };
    for ((a, b), m) in head(&second).iter().zip(head(&third)).zip(head(&mean)) {
        assert!((m - (a + b) / 2.0).abs() < 1e-6);
    }
    assert_ne!(head(&second), head(&third));
}

#[test]
fn train_resumes_from_its_checkpoint() {
    let out =
        std::env::temp_dir().join(format!("vitlab-resume-{}.safetensors", std::process::id()));
    let run = |epochs: &str, lr: &str, resume: bool, extra: &[&str]| {
        vit(tiny_train(&out, epochs, resume)
            .args(["--lr", lr, "--augment"])
            .args(extra))
    };
    let first = run("1", "1e-3", false, &[]);
    assert!(first.contains("epoch 1: train loss"), "{first}");
    let second = run("2", "2e-3", true, &[]);
    assert!(
        second.contains("resuming after epoch 1 (step 4)"),
        "{second}"
    );
    assert!(
        second.contains("epoch 2: train loss") && !second.contains("epoch 1: train loss"),
        "{second}"
    );
    // Changed options are allowed but said, each once; unchanged ones are not listed.
    assert!(
        second.contains(
            "options changed since the checkpoint's run: --epochs 1 → 2, --lr 0.001 → 0.002"
        ),
        "{second}"
    );
    let ckpt = std::path::PathBuf::from(format!("{}.ckpt", out.display()));
    let state = saved_state(&ckpt);
    assert_eq!(state.step, 2 * 4, "two epochs of 4 steps");
    assert_eq!(state.history.evals.len(), 2);

    // Model options cannot change what a checkpoint holds: said, and the saved plan is true.
    let third = run("3", "2e-3", true, &["--dim", "32", "--dropout", "0"]);
    assert!(
        third.contains(
            "the checkpoint's model is kept, so these are ignored: --dim 32 (the model has 64), --dropout 0 (the model has 0.1)"
        ),
        "{third}"
    );
    let checkpoint = Checkpoint::decode(&std::fs::read(&ckpt).unwrap(), &Budget::CLI).unwrap();
    assert_eq!(checkpoint.state.plan.config, checkpoint.weights.config);
    assert_eq!(checkpoint.state.plan.config.vit().unwrap().dim, 64);
    std::fs::remove_file(&out).unwrap();
    std::fs::remove_file(ckpt).unwrap();
}

/// The run state in a checkpoint `vit train` wrote.
fn saved_state(path: &std::path::Path) -> vitlab::train::SessionState {
    Checkpoint::decode(&std::fs::read(path).unwrap(), &Budget::CLI)
        .unwrap()
        .state
}

/// `vit train` of a one-block seed model on 256 digits (4 steps an epoch) into `out`.
fn tiny_train(out: &std::path::Path, epochs: &str, resume: bool) -> Command {
    let mut command = Command::new(VIT);
    command
        .args([
            "train", "--preset", "seed", "--depth", "1", "--limit", "256",
        ])
        .args(["--epochs", epochs, "--out"])
        .arg(out);
    if resume {
        command.arg("--resume");
    }
    command
}

/// Model, optimiser moments, data order, augmentation and dropout all carry over: stopping
/// after epoch 1 and resuming gives the very weights of a run never stopped.
#[test]
fn a_resumed_run_equals_one_never_interrupted() {
    let dir = std::env::temp_dir().join(format!("vitlab-same-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (straight, stopped) = (
        dir.join("straight.safetensors"),
        dir.join("stopped.safetensors"),
    );
    let run = |out: &std::path::Path, epochs: &str, resume: bool| {
        vit(tiny_train(out, epochs, resume)
            .args(["--batch-size", "64", "--lr", "1e-3", "--augment"])
            .args(["--seed", "5", "--threads", "1"]))
    };
    run(&straight, "2", false);
    run(&stopped, "1", false);
    assert_ne!(
        std::fs::read(&stopped).unwrap(),
        std::fs::read(&straight).unwrap()
    );
    run(&stopped, "2", true);
    assert_eq!(
        std::fs::read(&stopped).unwrap(),
        std::fs::read(&straight).unwrap()
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_diverging_run_stops_with_a_message_and_leaves_no_weights() {
    let out = std::env::temp_dir().join(format!("vitlab-nan-{}.safetensors", std::process::id()));
    let output = tiny_train(&out, "1", false)
        .args(["--lr", "1e30"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the loss became"), "{stderr}");
    assert!(stderr.contains("lower --lr"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!out.exists(), "no NaN weights are written");
}

#[test]
fn train_can_start_from_a_weights_file_with_another_dropout() {
    let out = std::env::temp_dir().join(format!("vitlab-init-{}.safetensors", std::process::id()));
    // At learning rate 0 the run must hand back exactly the weights it started from.
    let stdout = vit(Command::new(VIT)
        .args(["train", "--init-from", PARITY_WEIGHTS, "--dropout", "0.25"])
        .args(["--limit", "128", "--epochs", "1", "--lr", "0", "--out"])
        .arg(&out));
    assert!(stdout.contains("starting from the weights in"), "{stdout}");
    let decode = |bytes: &[u8]| vitlab::weights::decode(bytes).unwrap();
    let trained = decode(&std::fs::read(&out).unwrap());
    let start = decode(&std::fs::read(PARITY_WEIGHTS).unwrap());
    std::fs::remove_file(&out).unwrap();
    std::fs::remove_file(format!("{}.ckpt", out.display())).unwrap();
    assert_eq!(trained.config.dropout(), 0.25);
    let mut undone = trained.config.clone();
    undone.set_dropout(start.config.dropout());
    assert_eq!(undone, start.config);
    assert_eq!(trained.tensors.len(), start.tensors.len());
    for (a, b) in trained.tensors.iter().zip(&start.tensors) {
        assert_eq!((&a.name, &a.values), (&b.name, &b.values));
    }

    // The architecture comes from the file, so size options are refused with it.
    let output = Command::new(VIT)
        .args(["train", "--init-from", PARITY_WEIGHTS, "--dim", "32"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--dim"), "{stderr}");
}

#[test]
fn asking_for_the_gpu_without_the_gpu_feature_says_how_to_build_it() {
    if cfg!(feature = "gpu") {
        return;
    }
    let output = Command::new(VIT)
        .args(["eval", "--device", "gpu", "--weights", PARITY_WEIGHTS])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--features gpu"), "{stderr}");
}

/// Runs `vit` expecting it to refuse with a message (exit code 1, or 2 for clap's usage
/// errors), not a panic (101); its standard error.
pub fn refused(args: &[&str]) -> String {
    let output = Command::new(VIT).args(args).output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        matches!(output.status.code(), Some(1 | 2)),
        "{args:?}: {:?} {stderr}",
        output.status
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    stderr
}

#[test]
fn settings_the_page_would_refuse_are_refused() {
    let out = std::env::temp_dir().join(format!("vitlab-refused-{}", std::process::id()));
    let out = out.to_str().unwrap();
    let stderr = refused(&["train", "--label-smoothing", "1", "--out", out]);
    assert!(stderr.contains("smoothing"), "{stderr}");
    let stderr = refused(&["train", "--lr=-0.001", "--out", out]);
    assert!(stderr.contains("learning rate"), "{stderr}");
    let stderr = refused(&["train", "--batch-size", "0", "--out", out]);
    assert!(stderr.contains("at least 1"), "{stderr}");
    let stderr = refused(&[
        "eval",
        "--weights",
        PARITY_WEIGHTS,
        "--eval-batch-size",
        "0",
    ]);
    assert!(stderr.contains("at least 1"), "{stderr}");
    assert!(!std::path::Path::new(out).exists());
}

/// `--val N` holds out the last N training images: the run is scored on them (never on the
/// test images), and `vit eval --split val` scores a file on the same images.
#[test]
fn a_validation_split_scores_the_run_and_eval_scores_it_again() {
    let out = std::env::temp_dir().join(format!("vitlab-val-{}.safetensors", std::process::id()));
    let stdout = vit(Command::new(VIT)
        .args(["train", "--preset", "seed", "--depth", "1", "--epochs", "1"])
        .args(["--limit", "512", "--val", "700", "--out"])
        .arg(&out));
    assert!(
        stdout.contains("scored on 700 held-out validation images"),
        "{stdout}"
    );
    assert!(!stdout.contains("test acc"), "{stdout}");
    let during: f64 = stdout
        .lines()
        .find_map(|line| line.split("val acc ").nth(1))
        .map(|rest| rest.split('%').next().unwrap().parse().unwrap())
        .unwrap_or_else(|| panic!("{stdout}"));
    let eval = |split: &str| -> serde_json::Value {
        let stdout = vit(Command::new(VIT)
            .args([
                "eval",
                "--split",
                split,
                "--val",
                "700",
                "--json",
                "--weights",
            ])
            .arg(&out));
        serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
    };
    let (val, test) = (eval("val"), eval("test"));
    std::fs::remove_file(&out).unwrap();
    std::fs::remove_file(out.with_extension("safetensors.ckpt")).unwrap();
    assert_eq!(val["split"], "validation");
    assert_eq!(val["examples"], 700);
    assert_eq!(test["split"], "test");
    assert_eq!(test["examples"], 10_000);
    // The run's own score of its last epoch is the file's score on the same images.
    let again = 100.0 * val["accuracy"].as_f64().unwrap();
    assert!((again - during).abs() < 0.01, "{again} vs {during}");

    let stderr = refused(&[
        "eval",
        "--weights",
        PARITY_WEIGHTS,
        "--split",
        "val",
        "--val",
        "60000",
    ]);
    assert!(
        stderr.contains("leaves none of the 60000 training images"),
        "{stderr}"
    );
}

/// `vit train --model cnn` trains the CNN in the ViT's session; `--teacher` distils a ViT
/// from it, and a distilling run resumes only with its teacher.
#[test]
fn a_cnn_trains_and_a_vit_learns_from_it() {
    let temp = |name: &str| {
        std::env::temp_dir().join(format!("vitlab-{name}-{}.safetensors", std::process::id()))
    };
    let (teacher, student) = (temp("cnn"), temp("student"));
    let stdout = vit(Command::new(VIT)
        .args([
            "train", "--model", "cnn", "--widths", "8,16", "--hidden", "32",
        ])
        .args([
            "--epochs", "2", "--limit", "512", "--val", "500", "--lr", "3e-3", "--out",
        ])
        .arg(&teacher));
    let accuracy: f64 = stdout
        .lines()
        .filter_map(|line| line.split("val acc ").nth(1))
        .map(|rest| rest.split('%').next().unwrap().parse().unwrap())
        .next_back()
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(accuracy > 50.0, "{stdout}");
    let file = vitlab::weights::decode(&std::fs::read(&teacher).unwrap()).unwrap();
    assert_eq!(file.config.cnn().unwrap().widths, vec![8, 16]);

    let distil = |epochs: &str, extra: &[&str]| {
        let mut command = Command::new(VIT);
        command
            .args(["train", "--depth", "1", "--limit", "256", "--val", "500"])
            .args(["--epochs", epochs])
            .args(extra)
            .arg("--out")
            .arg(&student);
        command
    };
    let teacher_path = teacher.to_str().unwrap();
    let stdout = vit(&mut distil("1", &["--teacher", teacher_path]));
    assert!(stdout.contains("distilling from the CNN"), "{stdout}");
    let output = distil("2", &["--resume"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("give its weights again with --teacher"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let stdout = vit(&mut distil("2", &["--resume", "--teacher", teacher_path]));
    assert!(stdout.contains("epoch 2:"), "{stdout}");
    for path in [&teacher, &student] {
        std::fs::remove_file(path).unwrap();
        std::fs::remove_file(path.with_extension("safetensors.ckpt")).unwrap();
    }
}

/// `vit eval --data` checks each chunk against its manifest entry before it reads it: a chunk
/// with one to three bits flipped anywhere in its compressed bytes is refused by name every
/// time, never scored as if whole.
#[test]
fn eval_refuses_a_chunk_with_flipped_bits() {
    let data = vitlab::native::default_data_dir();
    let manifest = vitlab::native::read_manifest(&data).unwrap();
    let dir = std::env::temp_dir().join(format!("vitlab-flipped-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(data.join("manifest.json"), dir.join("manifest.json")).unwrap();
    for entry in &manifest.test {
        std::fs::copy(data.join(&entry.file), dir.join(&entry.file)).unwrap();
    }
    let victim = &manifest.test[0].file;
    let whole = std::fs::read(data.join(victim)).unwrap();
    let mut rng = vitlab::rng::SplitMix64::new(41);
    let weights = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/pretrained/vit-seed.safetensors"
    );
    for _ in 0..8 {
        let mut damaged = whole.clone();
        for _ in 0..=rng.below(3) {
            let bit = rng.below(damaged.len() * 8);
            damaged[bit / 8] ^= 1 << (bit % 8);
        }
        std::fs::write(dir.join(victim), &damaged).unwrap();
        let stderr = refused(&[
            "eval",
            "--weights",
            weights,
            "--data",
            dir.to_str().unwrap(),
        ]);
        assert!(
            stderr.contains(victim.as_str()) && stderr.contains("checksum mismatch"),
            "{stderr}"
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn hide_reads_one_image_with_patches_hidden_and_refuses_what_it_cannot_read() {
    let root = env!("CARGO_MANIFEST_DIR");
    let (vit_file, cnn_file) = (
        format!("{root}/pretrained/vit-lab.safetensors"),
        format!("{root}/pretrained/cnn-teacher.safetensors"),
    );
    let dir = std::env::temp_dir().join(format!("vitlab-hide-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let test = vitlab::native::load_split(
        &vitlab::native::default_data_dir(),
        vitlab::data::Split::Test,
    )
    .unwrap();
    let image = dir.join("digit.bin");
    std::fs::write(&image, test.image(0)).unwrap();
    let image = image.to_str().unwrap();
    let out = vit(Command::new(VIT).args([
        "hide",
        "--vit",
        &vit_file,
        "--cnn",
        &cnn_file,
        "--image",
        image,
        "--hidden",
        "17,24,31",
        "--threads",
        "1",
        "--json",
    ]));
    let label = test.labels[0];
    assert!(
        out.starts_with(&format!("3 hidden · ViT reads {label} (")),
        "{out}"
    );
    let json: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(json["hidden"], serde_json::json!([17, 24, 31]));
    for model in ["vit", "cnn", "vit_dropped"] {
        let sum: f64 = json["comparison"][model]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_f64().unwrap())
            .sum();
        assert!((sum - 1.0).abs() < 1e-4, "{model}: {out}");
    }

    let hide = |vit: &str, image: &str, hidden: &str| {
        refused(&[
            "hide", "--vit", vit, "--cnn", &cnn_file, "--image", image, "--hidden", hidden,
        ])
    };
    let short = dir.join("short.bin");
    std::fs::write(&short, [0u8; 100]).unwrap();
    let stderr = hide(&vit_file, short.to_str().unwrap(), "1");
    assert!(
        stderr.contains("784 bytes") && stderr.contains("not 100"),
        "{stderr}"
    );
    let stderr = hide(&vit_file, image, "3,49");
    assert!(stderr.contains("patch 49 is outside"), "{stderr}");
    let stderr = hide(&cnn_file, image, "3");
    assert!(stderr.contains("a ViT's weights are needed"), "{stderr}");
    let stderr = hide(&vit_file, image, "three");
    assert!(stderr.contains("--hidden"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn ablate_tables_every_head_of_a_vit_and_refuses_a_cnn() {
    let root = env!("CARGO_MANIFEST_DIR");
    let vit_file = format!("{root}/pretrained/vit-seed.safetensors");
    let csv = std::env::temp_dir().join(format!("vitlab-ablate-{}.csv", std::process::id()));
    for replacement in ["mean", "zero"] {
        let out = vit(Command::new(VIT).args([
            "ablate",
            "--weights",
            &vit_file,
            "--images",
            "50",
            "--mean-images",
            "50",
            "--replacement",
            replacement,
            "--csv",
            csv.to_str().unwrap(),
            "--threads",
            "1",
            "--json",
        ]));
        assert!(out.starts_with("50 test images, accuracy "), "{out}");
        let json: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
        let importance = &json["importance"];
        let depth = importance["accuracy"].as_array().unwrap().len();
        let heads = importance["accuracy"][0].as_array().unwrap().len();
        assert!(depth >= 1 && heads >= 1, "{out}");
        let table = std::fs::read_to_string(&csv).unwrap();
        assert_eq!(table.lines().count(), 1 + depth * heads, "{table}");
        assert!(
            table.starts_with("layer,head,accuracy,lost\n1,1,"),
            "{table}"
        );
    }
    std::fs::remove_file(&csv).unwrap();
    let cnn_file = format!("{root}/pretrained/cnn-teacher.safetensors");
    let stderr = refused(&["ablate", "--weights", &cnn_file, "--images", "5"]);
    assert!(stderr.contains("a ViT's weights are needed"), "{stderr}");
    let stderr = refused(&["ablate", "--weights", &vit_file, "--images", "0"]);
    assert!(stderr.contains("at least 1"), "{stderr}");
}

/// The first `count` test digits as a person's set in a fresh folder, labelled by `label`.
fn personal_folder(name: &str, count: usize, label: impl Fn(u8) -> u8) -> std::path::PathBuf {
    use vitlab::data::{PERSONAL_IMAGES_FILE, PERSONAL_LABELS_FILE, PersonalSet, Split};
    let test =
        vitlab::native::load_split(&vitlab::native::default_data_dir(), Split::Test).unwrap();
    let set = PersonalSet {
        images: (0..count)
            .map(|i| test.image(i).try_into().unwrap())
            .collect(),
        labels: test.labels[..count].iter().map(|&l| label(l)).collect(),
    };
    let dir = std::env::temp_dir().join(format!("vitlab-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (images, labels) = set.to_idx_gz();
    std::fs::write(dir.join(PERSONAL_IMAGES_FILE), images).unwrap();
    std::fs::write(dir.join(PERSONAL_LABELS_FILE), labels).unwrap();
    dir
}

#[test]
fn eval_scores_a_persons_set_and_refuses_one_that_is_not() {
    let weights = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/pretrained/vit-lab.safetensors"
    );
    let eval = |dir: &std::path::Path| -> serde_json::Value {
        let out = vit(Command::new(VIT)
            .args(["eval", "--weights", weights, "--json", "--personal"])
            .arg(dir));
        assert!(out.starts_with("personal accuracy "), "{out}");
        serde_json::from_str(out.lines().last().unwrap()).unwrap()
    };
    let right = personal_folder("eval-right", 40, |l| l);
    let scored = eval(&right);
    assert_eq!(scored["examples"], 40);
    assert!(scored["accuracy"].as_f64().unwrap() >= 0.95, "{scored}");
    // The same digits labelled wrongly: the labels are read, not assumed.
    let wrong = personal_folder("eval-wrong", 40, |l| (l + 1) % 10);
    assert!(eval(&wrong)["accuracy"].as_f64().unwrap() <= 0.05);

    std::fs::write(
        wrong.join(vitlab::data::PERSONAL_IMAGES_FILE),
        std::fs::read(right.join(vitlab::data::PERSONAL_LABELS_FILE)).unwrap(),
    )
    .unwrap();
    let stderr = refused(&[
        "eval",
        "--weights",
        weights,
        "--personal",
        wrong.to_str().unwrap(),
    ]);
    assert!(
        stderr.contains("is not MNIST's IDX images file"),
        "{stderr}"
    );
    let missing = right.join("nothing-here");
    let stderr = refused(&[
        "eval",
        "--weights",
        weights,
        "--personal",
        missing.to_str().unwrap(),
    ]);
    assert!(stderr.contains("personal-images-idx3-ubyte.gz"), "{stderr}");
    for dir in [right, wrong] {
        std::fs::remove_dir_all(dir).unwrap();
    }
}

#[test]
fn train_mixes_a_persons_set_into_the_training_images() {
    let extra = personal_folder("train-extra", 10, |l| l);
    let out_file =
        std::env::temp_dir().join(format!("vitlab-extra-{}.safetensors", std::process::id()));
    let out = vit(tiny_train(&out_file, "1", false)
        .args(["--extra-copies", "3", "--extra"])
        .arg(&extra));
    assert!(
        out.contains("the mix: 256 MNIST images and 3 × 10 of "),
        "{out}"
    );
    assert!(out.contains("on 286 images"), "{out}");
    assert!(
        std::fs::metadata(&out_file).is_ok(),
        "the weights are saved"
    );
    let stderr = refused(&["train", "--extra-copies", "2"]);
    assert!(stderr.contains("--extra"), "{stderr}");
    std::fs::remove_dir_all(extra).unwrap();
    for file in [
        out_file.clone(),
        out_file.with_extension("safetensors.ckpt"),
    ] {
        let _ = std::fs::remove_file(file);
    }
}

#[test]
fn classify_switches_heads_off_as_the_link_names_them() {
    let root = env!("CARGO_MANIFEST_DIR");
    let weights = format!("{root}/pretrained/vit-lab.safetensors");
    let test = vitlab::native::load_split(
        &vitlab::native::default_data_dir(),
        vitlab::data::Split::Test,
    )
    .unwrap();
    let image = std::env::temp_dir().join(format!("vitlab-classify-{}.bin", std::process::id()));
    std::fs::write(&image, test.image(0)).unwrap();
    let probabilities = |off: &str, replacement: &str| -> Vec<f64> {
        let out = vit(Command::new(VIT)
            .args([
                "classify",
                "--weights",
                &weights,
                "--image",
                image.to_str().unwrap(),
            ])
            .args([
                "--off",
                off,
                "--replacement",
                replacement,
                "--mean-images",
                "100",
                "--json",
            ]));
        let json: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
        assert_eq!(json["off"], off);
        json["probabilities"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_f64().unwrap())
            .collect()
    };
    let on = probabilities("", "mean");
    let by_mean = probabilities("3.8,5.7", "mean");
    let by_zero = probabilities("3.8,5.7", "zero");
    let differ = |a: &[f64], b: &[f64]| a.iter().zip(b).any(|(x, y)| (x - y).abs() > 1e-5);
    assert!(differ(&on, &by_mean) && differ(&on, &by_zero) && differ(&by_mean, &by_zero));
    let cnn = format!("{root}/pretrained/cnn-teacher.safetensors");
    let image_path = image.to_str().unwrap();
    for (model, off, said) in [
        (
            &weights,
            "9.9",
            "layer 9, head 9 is not in a model of 6 layers of 8 heads",
        ),
        (&weights, "0.1", "layer.head"),
        (&cnn, "1.1", "a ViT's weights are needed"),
    ] {
        let args = [
            "classify",
            "--weights",
            model,
            "--image",
            image_path,
            "--off",
            off,
        ];
        let stderr = refused(&args);
        assert!(stderr.contains(said), "{off}: {stderr}");
    }
    std::fs::remove_file(image).unwrap();
}

#[test]
fn classify_tells_the_story_the_lab_shows_and_refuses_it_for_a_cnn() {
    let root = env!("CARGO_MANIFEST_DIR");
    let weights = format!("{root}/pretrained/vit-seed.safetensors");
    let test = vitlab::native::load_split(
        &vitlab::native::default_data_dir(),
        vitlab::data::Split::Test,
    )
    .unwrap();
    let image = std::env::temp_dir().join(format!("vitlab-story-{}.bin", std::process::id()));
    std::fs::write(&image, test.image(1)).unwrap();
    let image_path = image.to_str().unwrap();
    let out = vit(Command::new(VIT).args([
        "classify",
        "--weights",
        &weights,
        "--image",
        image_path,
        "--story",
        "--json",
    ]));
    let json: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    let story = &json["story"];
    // The seed's model: patches of 7 pixels, a 4×4 grid, tokens of 64, 6 blocks.
    assert_eq!(story["patches"], 16);
    assert_eq!(story["patch_size"], 7);
    let tokens = story["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 16);
    assert!(tokens.iter().all(|t| t.as_array().unwrap().len() == 64));
    let lens = story["lens"].as_array().unwrap();
    assert_eq!(lens.len(), 6);
    // The lens after the last block is the prediction's probabilities.
    let last: Vec<f64> = lens[5]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_f64().unwrap())
        .collect();
    let probabilities: Vec<f64> = json["probabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_f64().unwrap())
        .collect();
    for (a, b) in last.iter().zip(&probabilities) {
        assert!((a - b).abs() < 1e-5, "{last:?} against {probabilities:?}");
    }
    let cnn = format!("{root}/pretrained/cnn-teacher.safetensors");
    let stderr = refused(&[
        "classify",
        "--weights",
        &cnn,
        "--image",
        image_path,
        "--story",
    ]);
    assert!(stderr.contains("a ViT's weights are needed"), "{stderr}");
    std::fs::remove_file(image).unwrap();
}
