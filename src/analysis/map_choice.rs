//! Which attention map the page shows large, and how a link names it.

/// Which attention map the large view shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MapChoice {
    /// Attention rollout through all layers.
    #[default]
    Rollout,
    /// The class token's attention in one layer, averaged over heads.
    LayerMean(usize),
    /// The class token's attention in one layer and head.
    Head(usize, usize),
}

impl MapChoice {
    pub fn label(self) -> String {
        match self {
            Self::Rollout => "attention rollout (all layers)".into(),
            Self::LayerMean(l) => format!("layer {}, mean of heads", l + 1),
            Self::Head(l, h) => format!("layer {}, head {}", l + 1, h + 1),
        }
    }

    /// The layer whose patch-to-patch attention goes with this map.
    pub fn layer(self, depth: usize) -> usize {
        match self {
            Self::Rollout => depth.saturating_sub(1),
            Self::LayerMean(l) | Self::Head(l, _) => l,
        }
    }

    /// Whether a model of `depth` layers and `heads` heads has this map.
    pub fn fits(self, depth: usize, heads: usize) -> bool {
        match self {
            Self::Rollout => true,
            Self::LayerMean(l) => l < depth,
            Self::Head(l, h) => l < depth && h < heads,
        }
    }

    /// As a link writes it, layers and heads counted from 1: `rollout`, `layer-3`,
    /// `head-3-2`.
    pub fn to_param(self) -> String {
        match self {
            Self::Rollout => "rollout".into(),
            Self::LayerMean(l) => format!("layer-{}", l + 1),
            Self::Head(l, h) => format!("head-{}-{}", l + 1, h + 1),
        }
    }

    /// Reads [`MapChoice::to_param`]'s form; layers and heads past 64 are not maps of any
    /// model the page can run.
    pub fn from_param(text: &str) -> Option<Self> {
        let counted = |part: &str| {
            part.parse::<usize>()
                .ok()
                .filter(|n| (1..=64).contains(n))
                .map(|n| n - 1)
        };
        let parts: Vec<&str> = text.split('-').collect();
        match parts.as_slice() {
            ["rollout"] => Some(Self::Rollout),
            ["layer", l] => Some(Self::LayerMean(counted(l)?)),
            ["head", l, h] => Some(Self::Head(counted(l)?, counted(h)?)),
            _ => None,
        }
    }
}
