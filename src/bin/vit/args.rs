//! What `vit` reads from its command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use vitlab::model::{CpuKernels, HeadsOff, Preset, Replacement};

#[derive(Parser)]
#[command(
    name = "vit",
    version,
    about = "Train and evaluate vitlab's Vision Transformer on MNIST"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Turn the original MNIST IDX files into the chunks and manifest the page fetches.
    PrepareData {
        /// Folder holding the four IDX files (gzip-compressed or not).
        #[arg(long)]
        idx: PathBuf,
        /// Output folder for the chunks and manifest.json.
        #[arg(long)]
        out: PathBuf,
        /// Images per chunk.
        #[arg(long, default_value_t = 2500)]
        chunk_items: usize,
    },
    /// Average weights files of one config (e.g. a run's last epochs) into one.
    Average {
        /// Where to write the averaged weights.
        #[arg(long)]
        out: PathBuf,
        /// The weights files, two or more.
        #[arg(required = true, num_args = 2..)]
        weights: Vec<PathBuf>,
    },
    /// Accuracy of a weights file on the 10,000 MNIST test images, or on a validation split.
    Eval {
        /// A safetensors file with the seed's tensor names.
        #[arg(long)]
        weights: PathBuf,
        /// The images to score: `test` (the 10,000 test images: score a shipped file once,
        /// after every choice is made) or `val` (the last --val training images, held out by
        /// `vit train --val`: for choosing).
        #[arg(long, value_enum, default_value_t = EvalSplit::Test)]
        split: EvalSplit,
        /// Training images held out at the end of the training split, for `--split val`.
        #[arg(long, default_value_t = 5000, value_parser = at_least_one)]
        val: usize,
        /// Score a person's own set instead: the folder holding the lab's export
        /// (personal-images-idx3-ubyte.gz and personal-labels-idx1-ubyte.gz). Not `--data`,
        /// which names the chunks' folder for every command.
        #[arg(long, value_name = "DIR", conflicts_with = "split")]
        personal: Option<PathBuf>,
        /// End with one line of JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Accuracy of a ViT and a CNN as a growing fraction of the ViT's patches is hidden, in
    /// a random order and the ViT's most relevant first (gradient relevance), on the first
    /// test images.
    Occlusion {
        /// The ViT's weights.
        #[arg(long)]
        vit: PathBuf,
        /// The CNN's weights.
        #[arg(long)]
        cnn: PathBuf,
        /// Test images measured, from the first.
        #[arg(long, default_value_t = 1000, value_parser = at_least_one)]
        images: usize,
        /// Seeds the random orders.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// End with one line of JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Both models' probabilities for one image with some of the ViT's patches hidden, and
    /// the ViT's with those patches' tokens dropped instead: what the lab's "patches hidden"
    /// card reads.
    Hide {
        /// The ViT's weights.
        #[arg(long)]
        vit: PathBuf,
        /// The CNN's weights.
        #[arg(long)]
        cnn: PathBuf,
        /// The model's input: 784 bytes, 28 rows of 28 pixels, 0 for the background.
        #[arg(long)]
        image: PathBuf,
        /// The patches hidden: row-major indices in the ViT's patch grid, comma-separated.
        #[arg(long, value_delimiter = ',')]
        hidden: Vec<usize>,
        /// End with one line of JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        common: Common,
    },
    /// One image's probabilities, with some of a ViT's heads switched off if asked: what the
    /// lab's prediction shows with those heads clicked off.
    Classify {
        /// The model's weights.
        #[arg(long)]
        weights: PathBuf,
        /// The model's input: 784 bytes, 28 rows of 28 pixels, 0 for the background.
        #[arg(long)]
        image: PathBuf,
        /// Heads switched off, as `layer.head` counted from 1, comma-separated (a link's `off`).
        #[arg(long, default_value = "", value_parser = heads_off)]
        off: HeadsList,
        /// What takes a switched-off head's place.
        #[arg(long, value_enum, default_value_t = ReplacementChoice::Mean)]
        replacement: ReplacementChoice,
        /// Test images the heads' mean outputs are taken over, from the first (the page takes
        /// its first test chunk's 2,500).
        #[arg(long, default_value_t = 2_500, value_parser = at_least_one)]
        mean_images: usize,
        /// Also tell the image's path through the ViT, as the lab's story shows it: each
        /// patch's token, the logit lens after each block, the rollout through each layer (in
        /// the JSON line; a ViT's weights only).
        #[arg(long)]
        story: bool,
        /// End with one line of JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Which heads matter: the test accuracy a ViT loses when each of its heads alone is
    /// switched off (its output replaced by its mean over the test images, or by zero).
    Ablate {
        /// The ViT's weights.
        #[arg(long)]
        weights: PathBuf,
        /// Test images measured, from the first.
        #[arg(long, default_value_t = 10_000, value_parser = at_least_one)]
        images: usize,
        /// What takes a switched-off head's place.
        #[arg(long, value_enum, default_value_t = ReplacementChoice::Mean)]
        replacement: ReplacementChoice,
        /// Test images the heads' mean outputs are taken over, from the first.
        #[arg(long, default_value_t = 10_000, value_parser = at_least_one)]
        mean_images: usize,
        /// Write the table as CSV (layer, head, accuracy, lost) to this file.
        #[arg(long)]
        csv: Option<PathBuf>,
        /// End with one line of JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Train a ViT on MNIST and save its weights.
    Train(Box<TrainArgs>),
    /// Measure training throughput and batch-1 latency (the seed preset on the CPU unless told).
    Bench {
        /// Timed training steps.
        #[arg(long, default_value_t = 60)]
        steps: usize,
        /// Images per training step.
        #[arg(long, default_value_t = 64)]
        batch_size: usize,
        /// Timed batch-1 inferences.
        #[arg(long, default_value_t = 300)]
        inferences: usize,
        /// Model preset: `seed`, `lab` or `cnn`.
        #[arg(long, default_value = "seed")]
        preset: Preset,
        /// The architecture: `vit` (its shape from --preset) or `cnn` (the seed CNN, as
        /// `--preset cnn`).
        #[arg(long, value_enum, default_value_t = ModelChoice::Vit)]
        model: ModelChoice,
        /// The CPU's code for a step: `fused` (the model's own kernels, the batch in shards
        /// side by side) or `composed` (Burn's ops and the batch whole, as before them; for
        /// comparison).
        #[arg(long, value_enum, default_value_t = KernelChoice::Fused)]
        cpu_kernels: KernelChoice,
        #[command(flatten)]
        common: Common,
    },
}

/// How `vit train --teacher` distils.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DistillChoice {
    Soft,
    Hard,
}

/// Which images `vit eval` scores.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EvalSplit {
    Val,
    Test,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KernelChoice {
    Fused,
    Composed,
}

impl KernelChoice {
    pub fn kernels(self) -> CpuKernels {
        match self {
            Self::Fused => CpuKernels::Fused,
            Self::Composed => CpuKernels::Composed,
        }
    }
}

#[derive(Args)]
pub struct Common {
    /// Where to compute: `cpu` (Burn's flex backend) or `gpu` (burn-wgpu on Vulkan, Metal
    /// or DirectX; needs a `vit` built with `--features gpu`).
    #[arg(long, value_enum, default_value_t = DeviceChoice::Cpu)]
    pub device: DeviceChoice,
    /// Folder with manifest.json and the chunks.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// CPU threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Images per evaluation batch.
    #[arg(long, default_value_t = 500, value_parser = at_least_one)]
    pub eval_batch_size: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DeviceChoice {
    Cpu,
    Gpu,
}

/// What takes a switched-off head's place (`vit ablate`, `vit classify`).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReplacementChoice {
    /// Its mean output over the test images, position by position.
    Mean,
    Zero,
}

impl ReplacementChoice {
    pub fn replacement(self) -> Replacement {
        match self {
            Self::Mean => Replacement::Mean,
            Self::Zero => Replacement::Zero,
        }
    }
}

/// Heads as `--off` names them, `(layer, head)` counted from 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeadsList(pub Vec<(usize, usize)>);

/// `--off`'s heads: `layer.head` counted from 1, comma-separated, as a link writes them.
fn heads_off(text: &str) -> Result<HeadsList, String> {
    let off = HeadsOff::from_param(text, Replacement::Mean).map_err(str::to_string)?;
    Ok(HeadsList(off.heads().collect()))
}

/// The architecture `vit train` builds.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModelChoice {
    /// The Vision Transformer (its shape from --preset and the ViT options).
    Vit,
    /// The small CNN of `tools/seed_cnn.py` (its shape from the CNN options).
    Cnn,
}

#[derive(Args)]
pub struct TrainArgs {
    /// The architecture: `vit` (the default) or `cnn`.
    #[arg(long, value_enum)]
    pub model: Option<ModelChoice>,
    /// Model preset: `seed` (the seed ViT, patch 7), `lab` (patch 4) or `cnn` (the same as
    /// `--model cnn`).
    #[arg(long, default_value = "seed")]
    pub preset: Preset,
    #[arg(long)]
    pub patch_size: Option<usize>,
    #[arg(long)]
    pub dim: Option<usize>,
    #[arg(long)]
    pub depth: Option<usize>,
    #[arg(long)]
    pub heads: Option<usize>,
    #[arg(long)]
    pub mlp_dim: Option<usize>,
    /// CNN: output channels of each convolution, comma-separated (e.g. 32,64,128).
    #[arg(long, value_delimiter = ',', value_parser = at_least_one)]
    pub widths: Option<Vec<usize>>,
    /// CNN: side of the square kernels (odd).
    #[arg(long)]
    pub kernel_size: Option<usize>,
    /// CNN: width of the hidden layer before the head.
    #[arg(long)]
    pub hidden: Option<usize>,
    #[arg(long)]
    pub dropout: Option<f64>,
    #[arg(long, default_value_t = 10, value_parser = at_least_one)]
    pub epochs: usize,
    #[arg(long, default_value_t = 64, value_parser = at_least_one)]
    pub batch_size: usize,
    /// Peak learning rate.
    #[arg(long, default_value_t = 1e-3)]
    pub lr: f64,
    /// AdamW weight decay (0 = Adam, as the seed).
    #[arg(long, default_value_t = 0.0)]
    pub weight_decay: f32,
    /// Warm-up epochs before cosine decay; without it the rate stays constant.
    #[arg(long)]
    pub warmup_epochs: Option<f64>,
    #[arg(long, default_value_t = 0.0)]
    pub label_smoothing: f32,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Hold out the last N training images as a validation split: each epoch is scored on
    /// them instead of the test images, so that choices made by the scores (epochs to keep or
    /// average, candidates, options) never see the test set. 0 scores on the test images.
    #[arg(long, default_value_t = 0)]
    pub val: usize,
    /// Score the run every N epochs (and after the last), not after each: runs on a few
    /// images have many short epochs.
    #[arg(long, default_value_t = 1, value_parser = at_least_one)]
    pub eval_every: usize,
    /// Train on only the first N training images (after the validation split is held out).
    #[arg(long, value_parser = at_least_one)]
    pub limit: Option<usize>,
    /// Mix a person's own set into the training images (fine-tuning on a handwriting): the
    /// folder holding the lab's export (personal-images-idx3-ubyte.gz and
    /// personal-labels-idx1-ubyte.gz). The mix: the MNIST images (--limit of them) and
    /// --extra-copies copies of the set.
    #[arg(long, value_name = "DIR")]
    pub extra: Option<PathBuf>,
    /// Copies of the --extra set in the mix: a few tens of digits among thousands need
    /// repeating to be seen.
    #[arg(long, default_value_t = 1, value_parser = at_least_one, requires = "extra")]
    pub extra_copies: usize,
    /// Random shifts (±2 px), rotations (±10°) and scaling (±10%); never flips.
    #[arg(long)]
    pub augment: bool,
    /// Where to write the weights (after every epoch); the checkpoint (weights, AdamW moments,
    /// run state) to OUT.ckpt.
    #[arg(long, default_value = "vit.safetensors")]
    pub out: PathBuf,
    /// Continue from OUT.ckpt (model, optimiser moments, data order) to --epochs in total.
    #[arg(long)]
    pub resume: bool,
    /// Continue the run in this checkpoint (one `vit train` or the page saved) to --epochs in
    /// total; new checkpoints go to OUT.ckpt.
    #[arg(long, value_name = "CHECKPOINT", conflicts_with = "resume")]
    pub resume_from: Option<PathBuf>,
    /// Start from these weights instead of a fresh model (fine-tuning): a new optimiser
    /// and schedule; the architecture comes from the file, `--dropout` may change.
    #[arg(
        long,
        value_name = "WEIGHTS",
        conflicts_with_all = ["resume", "resume_from", "model", "preset", "patch_size", "dim", "depth", "heads", "mlp_dim", "widths", "kernel_size", "hidden"]
    )]
    pub init_from: Option<PathBuf>,
    /// Distil from this model (a weights file of either architecture): the student learns
    /// from the teacher's predictions on each augmented batch as well as from the labels.
    #[arg(long, value_name = "WEIGHTS")]
    pub teacher: Option<PathBuf>,
    /// With --teacher: `soft` (Hinton's softened targets, --temperature and --distill-weight)
    /// or `hard` (DeiT's: half the loss from the labels, half from the teacher's argmax).
    #[arg(long, value_enum, default_value_t = DistillChoice::Soft, requires = "teacher")]
    pub distill: DistillChoice,
    /// With --teacher --distill soft: the temperature that softens both distributions.
    #[arg(long, default_value_t = 4.0, requires = "teacher")]
    pub temperature: f32,
    /// With --teacher --distill soft: the teacher's share of the loss.
    #[arg(long, default_value_t = 0.5, requires = "teacher")]
    pub distill_weight: f32,
    /// Also keep the weights of each of the last N epochs, as OUT with `.epochE` before
    /// its extension (for `vit average`).
    #[arg(long, default_value_t = 0)]
    pub keep_last: usize,
    #[command(flatten)]
    pub common: Common,
}

impl Command {
    pub fn common(&self) -> Option<&Common> {
        match self {
            Command::PrepareData { .. } | Command::Average { .. } => None,
            Command::Eval { common, .. }
            | Command::Bench { common, .. }
            | Command::Occlusion { common, .. }
            | Command::Hide { common, .. }
            | Command::Ablate { common, .. }
            | Command::Classify { common, .. } => Some(common),
            Command::Train(args) => Some(&args.common),
        }
    }
}

/// A count that must be at least 1 (a batch of 0 images would never end an epoch).
pub fn at_least_one(text: &str) -> Result<usize, CountError> {
    match text.parse::<usize>()? {
        0 => Err(CountError::Zero),
        count => Ok(count),
    }
}

/// Why [`at_least_one`] refused a count; clap prints it after the option's name.
#[derive(Debug, thiserror::Error)]
pub enum CountError {
    #[error("must be at least 1")]
    Zero,
    #[error(transparent)]
    NotANumber(#[from] std::num::ParseIntError),
}
