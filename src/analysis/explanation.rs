//! What the explanations card shows for one image: the gradient relevance of its patches for
//! one class (Chefer et al., `insight::gradient_relevance`) and the logit lens (what the class
//! token would predict after each block), with the numbers behind them as CSV. Pure: the
//! explaining worker computes it, the page draws and exports it.

use serde::{Deserialize, Serialize};

/// One image explained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// The class the relevance is for: the one asked for, or the prediction.
    pub class: usize,
    /// One relevance per patch, row-major over the grid.
    pub relevance: Vec<f32>,
    /// Per block, first first: the class probabilities the class token would give.
    pub lens: Vec<Vec<f32>>,
}

impl Explanation {
    /// Per block: the class the lens reads and its probability.
    pub fn lens_tops(&self) -> Vec<(usize, f32)> {
        self.lens
            .iter()
            .map(|probabilities| {
                probabilities
                    .iter()
                    .copied()
                    .enumerate()
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .unwrap_or((0, 0.0))
            })
            .collect()
    }

    /// `block,p0,…,p9` per block, counted from 1.
    pub fn lens_csv(&self) -> String {
        let classes = self.lens.first().map_or(0, Vec::len);
        let header: Vec<String> = (0..classes).map(|c| format!("p{c}")).collect();
        let mut csv = format!("block,{}\n", header.join(","));
        for (block, probabilities) in self.lens.iter().enumerate() {
            let values: Vec<String> = probabilities.iter().map(f32::to_string).collect();
            csv.push_str(&format!("{},{}\n", block + 1, values.join(",")));
        }
        csv
    }
}

/// Softmax of each row of logits.
pub fn probabilities(logits: &[f32]) -> Vec<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exponentials: Vec<f32> = logits.iter().map(|l| (l - max).exp()).collect();
    let sum: f32 = exponentials.iter().sum();
    exponentials.iter().map(|e| e / sum).collect()
}
