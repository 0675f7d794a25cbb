//! What the page and its explaining worker (`role=explain`) say to each other: explanations of
//! a drawing (gradient relevance, the logit lens) and the ViT against the CNN with patches
//! hidden, computed on the backend the page draws on, never on the drawing's path. A request's
//! id travels in its packet (`web::packet`), and its answer's packet repeats it; bytes
//! (weights, images) travel beside the message.

use serde::{Deserialize, Serialize};

use super::BackendKind;
use crate::analysis::explanation::Explanation;
use crate::analysis::occlusion::{Comparison, OcclusionCurves};

/// The page to the explaining worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToExplainer {
    /// Keep the safetensors bytes beside this to explain with; nothing is built until the
    /// first [`ToExplainer::Explain`]. Answered by [`FromExplainer::Kept`].
    Keep,
    /// Explain the 28×28 image beside this on `backend`: the gradient relevance for `class`
    /// (the prediction when `None`) and the logit lens. Answered by
    /// [`FromExplainer::Explained`].
    Explain {
        backend: BackendKind,
        class: Option<u8>,
    },
    /// Keep the CNN's safetensors bytes beside this, to compare the ViT with. Answered by
    /// [`FromExplainer::Kept`].
    KeepCnn,
    /// Both models' probabilities for the 28×28 image beside this with the patches in
    /// `hidden` blanked, and the ViT's with their tokens dropped, on `backend`. Answered by
    /// [`FromExplainer::Compared`].
    Compare {
        backend: BackendKind,
        hidden: Vec<u16>,
    },
    /// The occlusion curves of both models on the first `images` test digits (the worker
    /// fetches and keeps the first test chunk), on `backend`. Answered by
    /// [`FromExplainer::Curves`].
    Curves { backend: BackendKind, images: u32 },
}

/// The explaining worker to the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FromExplainer {
    /// The worker listens.
    Listening {
        /// The build the worker is of ([`super::BUILD`]).
        build: String,
    },
    /// The weights are kept.
    Kept,
    Explained {
        explanation: Explanation,
    },
    Compared {
        comparison: Comparison,
    },
    Curves {
        curves: OcclusionCurves,
    },
    /// The request failed; the page starts a fresh worker for the next one.
    Failed {
        message: String,
    },
}

impl super::Greeting for FromExplainer {
    fn greeting(&self) -> Option<&str> {
        match self {
            Self::Listening { build } => Some(build),
            _ => None,
        }
    }
}

impl super::Called for ToExplainer {
    fn called(&self) -> &'static str {
        "a request"
    }
}

impl super::Reply for FromExplainer {
    fn fault(&self) -> Option<&str> {
        match self {
            Self::Failed { message, .. } => Some(message),
            _ => None,
        }
    }
}
