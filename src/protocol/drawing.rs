//! What the page and a drawing worker say to each other. A drawing worker holds the model the
//! lab draws with, on the CPU (the page's own binary, started again as a worker) or on WebGPU
//! (the `worker` binary in `role=gpu`): the page's own thread only paints. A request's id
//! travels in its packet (`web::packet`), and its answer's packet repeats it; bytes (weights,
//! images, read-back values) travel beside the message.

use serde::{Deserialize, Serialize};

use crate::analysis::ablation::HeadImportance;
use crate::analysis::inference::ModelInsight;
use crate::model::{HeadsOff, ModelConfig};

/// The page to a drawing worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToDrawing {
    /// Build the model from the safetensors bytes beside this on the worker's device, read what
    /// its weights show, and run it once so that every kernel is ready; replaces the model
    /// before only once all of that worked. Answered by [`FromDrawing::Loaded`], or by
    /// [`FromDrawing::Refused`] for bytes that are not weights (the model before stays).
    Load,
    /// Classify the 28×28 image beside this with the heads `off` names switched off (a ViT's;
    /// their mean outputs taken on first use over the first test chunk and kept with the
    /// model) and read what the page shows of it. Answered by [`FromDrawing::Classified`].
    Classify { off: HeadsOff },
    /// The story of the 28×28 image beside this through a ViT (see
    /// [`crate::analysis::story`]), with the heads `off` names switched off. Asked of the
    /// CPU's worker (the page's own binary) whatever draws; answered by
    /// [`FromDrawing::Story`].
    Story { off: HeadsOff },
    /// Mean attention distance per layer and head over `count` test digits from the
    /// `first`th (the worker fetches and keeps the first test chunk). Answered by
    /// [`FromDrawing::Distances`].
    Distances { first: u32, count: u32 },
    /// Test digit `index` of the first test chunk, or one at random. Answered by
    /// [`FromDrawing::TestDigit`].
    TestDigit { index: Option<u32> },
    /// What the model reads in each of the `count` 28×28 images beside this (a person's own
    /// set), every head on. Answered by [`FromDrawing::Read`].
    Read { count: u32 },
    /// Which heads matter: the accuracy on the first `images` test digits with each head alone
    /// switched off, by zero where `zero`, else by its mean over the first test chunk. Asked
    /// of a drawing worker of its own (the page's binary, on the CPU), never of the one the lab
    /// draws with. Answered by [`FromDrawing::Heads`].
    Heads { images: u32, zero: bool },
    /// How many of the first `images` test digits the model reads right, every head on.
    /// Asked, like [`ToDrawing::Heads`], of a worker of its own on the CPU. Answered by
    /// [`FromDrawing::Scored`].
    Score { images: u32 },
}

/// A drawing worker to the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FromDrawing {
    /// The worker listens.
    Listening {
        /// The build the worker is of ([`super::BUILD`]).
        build: String,
    },
    /// The model is built and warm; what its weights show comes with it.
    Loaded {
        config: ModelConfig,
        insight: ModelInsight,
    },
    /// The packed reading (see [`crate::analysis::reading::Reading`]) travels beside this as
    /// little-endian `f32`s.
    Classified,
    /// The packed story (see [`crate::analysis::story::Story`]) travels beside this as
    /// little-endian `f32`s.
    Story,
    Distances {
        values: Vec<Vec<f32>>,
    },
    /// The digit read in each image and its probability, in the order sent.
    Read {
        digits: Vec<u8>,
        probabilities: Vec<f32>,
    },
    Heads {
        importance: HeadImportance,
    },
    Scored {
        correct: u32,
        images: u32,
    },
    /// Its 784 grey levels travel beside this.
    TestDigit {
        index: u32,
        label: u8,
    },
    /// What was asked cannot be done with what was sent or held (weights that are not a
    /// model, no model yet, a test chunk that did not load); the worker and its device are
    /// fine.
    Refused {
        message: String,
    },
    /// The device failed; the page no longer trusts this worker.
    Failed {
        message: String,
    },
}

impl super::Greeting for FromDrawing {
    fn greeting(&self) -> Option<&str> {
        match self {
            Self::Listening { build } => Some(build),
            _ => None,
        }
    }
}

impl super::Called for ToDrawing {
    fn called(&self) -> &'static str {
        "a request"
    }
}

impl super::Reply for FromDrawing {
    fn fault(&self) -> Option<&str> {
        match self {
            Self::Failed { message, .. } => Some(message),
            _ => None,
        }
    }
}
