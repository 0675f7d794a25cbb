//! What a model costs before it is built: parameters, tokens, work and memory per image,
//! counted from a [`VitConfig`] alone, so that a hostile or careless config (a file of a
//! few hundred bytes describing a model of a billion parameters, patch 1 with 785 tokens,
//! depth 2,000) is refused with a message instead of exhausting memory or freezing a tab.
//!
//! Every count is checked 64-bit arithmetic: a config whose counts overflow is refused too,
//! on 32-bit (the browser) as on 64-bit.

use super::{CnnConfig, VitConfig};

/// What one image costs a model of some config. Counts are in elements or multiply-adds of
/// `f32` unless named bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelCost {
    pub params: u64,
    /// Layers to build (a ViT's blocks, a CNN's convolutions): each is modules and tensors of
    /// its own, whose bookkeeping outweighs a narrow layer's parameters, so a config of
    /// millions of width-1 layers is bounded here, not by its parameters.
    pub layers: u64,
    /// Patches plus the class token.
    pub tokens: u64,
    /// Multiply-adds of one forward pass of one image (eq. 1–4: the patch projection, every
    /// block's QKV, scores, weighted sum, output projection and MLP, and the head).
    pub forward_macs: u64,
    /// Bytes one image's forward pass keeps for the backward pass, every layer's inputs,
    /// attention probabilities and MLP activations (an upper bound: Burn frees some early).
    pub training_bytes: u64,
    /// Bytes of one image's attention probabilities, every layer and head: what a drawing
    /// reads back for the heatmaps.
    pub attention_bytes: u64,
    /// Operations of the page's analyses of one drawing and of the weights: the rollout
    /// (a tokens² by tokens matrix product per layer), the mean attention distances (patches²
    /// per head and layer) and the filters' principal components (a few Jacobi sweeps of a
    /// patch_dim² matrix, each patch_dim³).
    pub analysis_ops: u64,
}

/// The most a model may cost where it runs. Each limit is named in the refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Who sets the limits, as the refusal says it ("the page", "`vit`").
    pub owner: &'static str,
    pub max_params: u64,
    pub max_layers: u64,
    pub max_tokens: u64,
    pub max_forward_macs: u64,
    pub max_attention_bytes: u64,
    pub max_analysis_ops: u64,
    /// For a whole batch: images × [`ModelCost::training_bytes`] (evaluation batches are held
    /// to it too: they keep less, but a layer's attention alone is most of it at many tokens).
    pub max_training_bytes: u64,
    /// Whether a run here can be given a teacher to distil from (the page has no way to).
    pub teachers: bool,
}

impl Budget {
    /// The browser: a drawing classified on the CPU backend in well under ~100 ms (the lab
    /// model's 11.8 M multiply-adds take ~5 ms there, so 200 M is ~17× that), its maps and
    /// analyses read and computed on the main thread in a few ms, and training in a few
    /// hundred MB of a tab's memory.
    pub const PAGE: Budget = Budget {
        owner: "the page",
        max_params: 50_000_000,
        // ViT-Huge has 32; twice that is far past anything the page trains in minutes.
        max_layers: 64,
        max_tokens: 257,
        max_forward_macs: 200_000_000,
        max_attention_bytes: 16 << 20,
        max_analysis_ops: 2_000_000_000,
        max_training_bytes: 1 << 30,
        teachers: false,
    };

    /// The command line: ten times the page's work per image and 8 GiB of activations per
    /// batch (a third of the 24 GiB machine the shipped models were trained on).
    pub const CLI: Budget = Budget {
        owner: "`vit`",
        max_params: 500_000_000,
        max_layers: 256,
        max_tokens: 1025,
        max_forward_macs: 2_000_000_000,
        max_attention_bytes: 256 << 20,
        max_analysis_ops: 50_000_000_000,
        max_training_bytes: 8 << 30,
        teachers: true,
    };
}

/// Why a config is refused before anything is built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CostError {
    #[error("the model's sizes are too large to count (they overflow 64-bit arithmetic)")]
    Overflow,
    #[error("the model's {what} is {value}, more than the {limit} {owner} allows")]
    OverBudget {
        what: &'static str,
        value: u64,
        limit: u64,
        owner: &'static str,
    },
}

/// Checked arithmetic on counts: `None` on overflow.
fn sum(terms: &[Option<u64>]) -> Option<u64> {
    terms
        .iter()
        .try_fold(0u64, |total, term| total.checked_add((*term)?))
}

fn product(factors: &[u64]) -> Option<u64> {
    factors
        .iter()
        .try_fold(1u64, |total, &factor| total.checked_mul(factor))
}

/// Jacobi sweeps the filters' analysis needs in practice (it stops after at most 100).
const JACOBI_SWEEPS: u64 = 10;

impl VitConfig {
    /// The cost of one image, counted without building anything.
    pub fn cost(&self) -> Result<ModelCost, CostError> {
        self.count().ok_or(CostError::Overflow)
    }

    fn count(&self) -> Option<ModelCost> {
        let wide = |n: usize| u64::try_from(n).ok();
        let image = wide(self.image_size)?;
        let patch = wide(self.patch_size)?.max(1);
        let grid = image / patch;
        let patches = grid.checked_mul(grid)?;
        let tokens = patches.checked_add(1)?;
        let patch_dim = product(&[patch, patch, wide(self.channels)?])?;
        let [d, mlp, heads, depth, classes] = [
            self.dim,
            self.mlp_dim,
            self.heads,
            self.depth,
            self.num_classes,
        ]
        .map(wide);
        let (d, mlp, heads, depth, classes) = (d?, mlp?, heads?, depth?, classes?);

        let embed = sum(&[
            product(&[patch_dim, d]),
            Some(d),
            product(&[tokens, d]),
            Some(d),
        ])?;
        let block = sum(&[
            product(&[4, d]),           // norm1, norm2
            product(&[4, d, d]),        // qkv (no bias), proj
            Some(d),                    // proj bias
            product(&[2, d, mlp]),      // mlp_in, mlp_out
            sum(&[Some(mlp), Some(d)]), // their biases
        ])?;
        let head = sum(&[product(&[2, d]), product(&[d, classes]), Some(classes)])?;
        let params = sum(&[Some(embed), product(&[depth, block]), Some(head)])?;

        let block_macs = sum(&[
            product(&[4, tokens, d, d]),      // qkv, proj
            product(&[2, tokens, tokens, d]), // scores, weighted sum (over all heads)
            product(&[2, tokens, d, mlp]),    // mlp
        ])?;
        let forward_macs = sum(&[
            product(&[patches, patch_dim, d]),
            product(&[depth, block_macs]),
            product(&[d, classes]),
        ])?;

        let attention_elements = product(&[depth, heads, tokens, tokens])?;
        let block_activations = sum(&[
            product(&[10, tokens, d]), // norms, q, k, v, context, projection, residuals
            product(&[2, heads, tokens, tokens]), // scores and probabilities
            product(&[3, tokens, mlp]), // the MLP's input to GELU, its output, dropout
        ])?;
        let training_elements = sum(&[
            product(&[tokens, patch_dim]),
            product(&[depth, block_activations]),
        ])?;
        let analysis_ops = sum(&[
            product(&[depth, tokens, tokens, tokens]),
            product(&[depth, heads, patches, patches]),
            product(&[JACOBI_SWEEPS, 3, patch_dim, patch_dim, patch_dim]),
        ])?;
        Some(ModelCost {
            params,
            layers: depth,
            tokens,
            forward_macs,
            training_bytes: training_elements.checked_mul(4)?,
            attention_bytes: attention_elements.checked_mul(4)?,
            analysis_ops,
        })
    }
}

impl ModelCost {
    /// This cost, or the first limit of `budget` it passes; `batch`, where given, is the
    /// training batch it must also fit.
    pub fn check(self, budget: &Budget, batch: Option<usize>) -> Result<ModelCost, CostError> {
        let training = match batch {
            Some(batch) => u64::try_from(batch)
                .ok()
                .and_then(|batch| batch.checked_mul(self.training_bytes))
                .ok_or(CostError::Overflow)?,
            None => 0,
        };
        let limits = [
            ("parameter count", self.params, budget.max_params),
            ("layer count", self.layers, budget.max_layers),
            ("token count", self.tokens, budget.max_tokens),
            (
                "work per image (multiply-adds)",
                self.forward_macs,
                budget.max_forward_macs,
            ),
            (
                "attention maps per image (bytes)",
                self.attention_bytes,
                budget.max_attention_bytes,
            ),
            (
                "analysis work (operations)",
                self.analysis_ops,
                budget.max_analysis_ops,
            ),
            (
                "memory per batch (bytes)",
                training,
                budget.max_training_bytes,
            ),
        ];
        match limits.into_iter().find(|(_, value, limit)| value > limit) {
            Some((what, value, limit)) => Err(CostError::OverBudget {
                what,
                value,
                limit,
                owner: budget.owner,
            }),
            None => Ok(self),
        }
    }

    /// The parameters of a counted cost; `usize::MAX` (32 bits in the browser) for a model too
    /// big to count or to build.
    pub fn params_or_max(cost: Result<Self, CostError>) -> usize {
        cost.ok()
            .and_then(|cost| usize::try_from(cost.params).ok())
            .unwrap_or(usize::MAX)
    }
}

impl CnnConfig {
    /// What this CNN costs, counted in checked arithmetic without building it. It has no
    /// tokens and no attention maps; its analysis (receptive fields) is free.
    pub fn cost(&self) -> Result<ModelCost, CostError> {
        self.count().ok_or(CostError::Overflow)
    }

    fn count(&self) -> Option<ModelCost> {
        let wide = |n: usize| u64::try_from(n).ok();
        let kernel_area = product(&[wide(self.kernel_size)?, wide(self.kernel_size)?])?;
        let (mut params, mut macs, mut activations) = (0u64, 0u64, 0u64);
        let mut input = wide(self.channels)?;
        let mut side = wide(self.image_size)?;
        for &width in &self.widths {
            let width = wide(width)?;
            let weights = product(&[input, kernel_area, width])?;
            params = sum(&[Some(params), Some(weights), Some(width)])?;
            let area = product(&[side, side])?;
            macs = sum(&[Some(macs), product(&[area, weights])])?;
            side /= 2;
            // The convolution's output, then the pooled map and its ReLU.
            activations = sum(&[
                Some(activations),
                product(&[area, width]),
                product(&[2, side, side, width]),
            ])?;
            input = width;
        }
        let flat = product(&[input, side, side])?;
        let (hidden, classes) = (wide(self.hidden)?, wide(self.num_classes)?);
        let dense = sum(&[product(&[flat, hidden]), product(&[hidden, classes])])?;
        Some(ModelCost {
            params: sum(&[Some(params), Some(dense), Some(hidden), Some(classes)])?,
            layers: wide(self.widths.len())?,
            tokens: 0,
            forward_macs: sum(&[Some(macs), Some(dense)])?,
            training_bytes: sum(&[
                Some(activations),
                product(&[wide(self.image_size)?, wide(self.image_size)?]),
                product(&[3, hidden]),
            ])?
            .checked_mul(4)?,
            attention_bytes: 0,
            analysis_ops: 0,
        })
    }
}
