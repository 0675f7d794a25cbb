//! What the page and its GPU worker say to each other. Requests carry an id that their answer
//! repeats; bytes (weights, images, read-back values) travel beside the message.

use serde::{Deserialize, Serialize};

use super::BackendKind;
use crate::analysis::explanation::Explanation;
use crate::analysis::occlusion::{Comparison, OcclusionCurves};

/// The page to the GPU worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToGpu {
    /// Build the model from the safetensors bytes beside this, on WebGPU (started on the first
    /// load), and run it once so that every kernel is compiled; replaces any model before.
    /// Answered by [`FromGpu::Loaded`].
    Load { id: u32 },
    /// Classify the 28×28 image beside this. Answered by [`FromGpu::Classified`].
    Classify { id: u32 },
    /// Mean attention distance per layer and head over the images beside this (784 bytes
    /// each). Answered by [`FromGpu::Distances`].
    Distances { id: u32, images: usize },
    /// Keep the safetensors bytes beside this to explain with; nothing is built until the
    /// first [`ToGpu::Explain`]. Answered by [`FromGpu::Loaded`].
    Keep { id: u32 },
    /// Explain the 28×28 image beside this on `backend`: the gradient relevance for `class`
    /// (the prediction when `None`) and the logit lens. Answered by [`FromGpu::Explained`].
    Explain {
        id: u32,
        backend: BackendKind,
        class: Option<u8>,
    },
    /// Keep the CNN's safetensors bytes beside this, to compare the ViT with. Answered by
    /// [`FromGpu::Loaded`].
    KeepCnn { id: u32 },
    /// Both models' probabilities for the 28×28 image beside this with the patches in
    /// `hidden` blanked, and the ViT's with their tokens dropped, on `backend`. Answered by
    /// [`FromGpu::Compared`].
    Compare {
        id: u32,
        backend: BackendKind,
        hidden: Vec<u16>,
    },
    /// The occlusion curves of both models on the images beside this (784 bytes each), then
    /// their labels (a byte each), on `backend`. Answered by [`FromGpu::Curves`].
    Curves {
        id: u32,
        backend: BackendKind,
        images: usize,
    },
}

/// The GPU worker to the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FromGpu {
    /// The worker listens.
    Ready,
    /// The model is built and warm.
    Loaded {
        id: u32,
    },
    /// The packed read-back (see [`crate::analysis::inference::PendingClassification`]) travels beside
    /// this as little-endian `f32`s.
    Classified {
        id: u32,
    },
    Distances {
        id: u32,
        values: Vec<Vec<f32>>,
    },
    Explained {
        id: u32,
        explanation: Explanation,
    },
    Compared {
        id: u32,
        comparison: Comparison,
    },
    Curves {
        id: u32,
        curves: OcclusionCurves,
    },
    /// The request failed; the worker goes on, but the page no longer trusts its GPU.
    Failed {
        id: u32,
        message: String,
    },
}

impl FromGpu {
    /// The request this answers, if it answers one.
    pub fn id(&self) -> Option<u32> {
        match self {
            Self::Ready => None,
            Self::Loaded { id }
            | Self::Classified { id }
            | Self::Distances { id, .. }
            | Self::Explained { id, .. }
            | Self::Compared { id, .. }
            | Self::Curves { id, .. }
            | Self::Failed { id, .. } => Some(*id),
        }
    }
}

impl super::Greeting for FromGpu {
    fn is_greeting(&self) -> bool {
        matches!(self, Self::Ready)
    }
}

impl super::Called for ToGpu {
    fn called(&self) -> &'static str {
        "a request"
    }
}
