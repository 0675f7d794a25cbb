//! What the model's attention and embeddings say, computed from plain arrays (Fig. 6–7 of
//! the ViT paper, and attention rollout by Abnar & Zuidema, 2020).
//!
//! Attention comes as one [`LayerAttention`] per layer, for one image: token 0 is the class
//! token, tokens 1.. the patches in row-major order.

/// One layer's attention probabilities for one image: `heads × tokens × tokens`, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerAttention {
    pub heads: usize,
    pub tokens: usize,
    pub values: Vec<f32>,
}

impl LayerAttention {
    pub fn at(&self, head: usize, query: usize, key: usize) -> f32 {
        self.values[(head * self.tokens + query) * self.tokens + key]
    }

    /// Splits a flat `[batch, heads, tokens, tokens]` tensor's values into one per image.
    pub fn split_batch(values: &[f32], batch: usize, heads: usize, tokens: usize) -> Vec<Self> {
        let per_image = heads * tokens * tokens;
        (0..batch)
            .map(|b| Self {
                heads,
                tokens,
                values: values[b * per_image..(b + 1) * per_image].to_vec(),
            })
            .collect()
    }

    /// The head-averaged `tokens × tokens` matrix.
    pub fn head_mean(&self) -> Vec<f32> {
        let n = self.tokens * self.tokens;
        let mut mean = vec![0.0; n];
        for head in 0..self.heads {
            for (m, v) in mean.iter_mut().zip(&self.values[head * n..(head + 1) * n]) {
                *m += v / self.heads as f32;
            }
        }
        mean
    }

    /// Where the class token looks with `head`: one weight per patch, row-major grid.
    pub fn class_attention(&self, head: usize) -> Vec<f32> {
        (1..self.tokens).map(|key| self.at(head, 0, key)).collect()
    }

    /// The class token's attention over the patches, averaged over heads.
    pub fn class_attention_mean(&self) -> Vec<f32> {
        let mean = self.head_mean();
        mean[1..self.tokens].to_vec()
    }

    /// Where patch `patch` (0-based, row-major) looks, averaged over heads, over the patches.
    pub fn patch_attention_mean(&self, patch: usize) -> Vec<f32> {
        let mean = self.head_mean();
        let row = (patch + 1) * self.tokens;
        mean[row + 1..row + self.tokens].to_vec()
    }
}

/// Attention rollout: per layer, average the heads, add the identity for the residual path,
/// renormalise the rows; multiply through the layers. Returns the class token's row over the
/// patches, one weight per patch, summing to at most 1 (the rest stays on the class token).
pub fn rollout(layers: &[LayerAttention]) -> Vec<f32> {
    let Some(first) = layers.first() else {
        return Vec::new();
    };
    let n = first.tokens;
    let mut joint = identity(n);
    for layer in layers {
        let mut a = layer.head_mean();
        for i in 0..n {
            a[i * n + i] += 1.0;
            let sum: f32 = a[i * n..(i + 1) * n].iter().sum();
            a[i * n..(i + 1) * n].iter_mut().for_each(|v| *v /= sum);
        }
        // Later layers act on the mixture made by earlier ones: joint = A_l · joint.
        joint = matmul(&a, &joint, n);
    }
    joint[1..n].to_vec()
}

/// Gradient-weighted attention relevance (Chefer, Gur & Wolf, ICCV 2021, "generic attention
/// explainability", eq. 5–6 for a self-attention encoder): per layer the heads' mean of
/// `(∂y_c/∂A ⊙ A)⁺`, the positive part of each attention weight times the class score's
/// gradient with respect to it; `R = I`, then `R ← R + Ā_l · R` through the layers. Returns
/// the class token's row over the patches, one relevance per patch (not normalised: zero
/// where nothing speaks for class `c`). `gradients[l]` has `layers[l]`'s shape.
pub fn gradient_relevance(layers: &[LayerAttention], gradients: &[LayerAttention]) -> Vec<f32> {
    let Some(first) = layers.first() else {
        return Vec::new();
    };
    let n = first.tokens;
    let mut relevance = identity(n);
    for (layer, gradient) in layers.iter().zip(gradients) {
        let mut weighted = vec![0.0; n * n];
        for head in 0..layer.heads {
            let values = &layer.values[head * n * n..(head + 1) * n * n];
            let grads = &gradient.values[head * n * n..(head + 1) * n * n];
            for ((w, a), g) in weighted.iter_mut().zip(values).zip(grads) {
                *w += (a * g).max(0.0) / layer.heads as f32;
            }
        }
        let mixed = matmul(&weighted, &relevance, n);
        relevance.iter_mut().zip(mixed).for_each(|(r, m)| *r += m);
    }
    relevance[1..n].to_vec()
}

fn identity(n: usize) -> Vec<f32> {
    let mut m = vec![0.0; n * n];
    (0..n).for_each(|i| m[i * n + i] = 1.0);
    m
}

fn matmul(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    let mut out = vec![0.0; n * n];
    for i in 0..n {
        for k in 0..n {
            let aik = a[i * n + k];
            for j in 0..n {
                out[i * n + j] += aik * b[k * n + j];
            }
        }
    }
    out
}

/// Mean attention distance per head, in pixels (Fig. 7, right): for each patch query, the
/// distance to every patch key weighted by its attention (renormalised over the patches),
/// averaged over the queries.
pub fn mean_attention_distance(layer: &LayerAttention, grid: usize, patch_size: usize) -> Vec<f32> {
    let patches = grid * grid;
    (0..layer.heads)
        .map(|head| {
            let mut total = 0.0;
            for q in 0..patches {
                let (qy, qx) = ((q / grid) as f32, (q % grid) as f32);
                let (mut weighted, mut mass) = (0.0, 0.0);
                for k in 0..patches {
                    let (ky, kx) = ((k / grid) as f32, (k % grid) as f32);
                    let w = layer.at(head, q + 1, k + 1);
                    weighted += w * ((qy - ky).powi(2) + (qx - kx).powi(2)).sqrt();
                    mass += w;
                }
                if mass > 0.0 {
                    total += weighted / mass;
                }
            }
            total / patches as f32 * patch_size as f32
        })
        .collect()
}

/// Cosine similarity between the position embedding of each patch and every other patch
/// (Fig. 7, centre): `patches × patches`, row-major. `embeddings` is `[tokens, dim]` with
/// the class token's first.
pub fn position_similarity(embeddings: &[f32], tokens: usize, dim: usize) -> Vec<f32> {
    let rows: Vec<&[f32]> = (1..tokens)
        .map(|t| &embeddings[t * dim..(t + 1) * dim])
        .collect();
    let norms: Vec<f32> = rows
        .iter()
        .map(|r| r.iter().map(|v| v * v).sum::<f32>().sqrt())
        .collect();
    let mut out = Vec::with_capacity(rows.len() * rows.len());
    for (i, a) in rows.iter().enumerate() {
        for (j, b) in rows.iter().enumerate() {
            let dot: f32 = a.iter().zip(*b).map(|(x, y)| x * y).sum();
            out.push(dot / (norms[i] * norms[j]).max(1e-12));
        }
    }
    out
}

/// Principal components of the patch-embedding filters (Fig. 7, left). `filters` is E as
/// PyTorch stores it, `[dim, patch_dim]`: each row is one filter. Returns up to `count`
/// components, each a unit `patch_dim` vector, strongest first, with its share of the
/// variance.
pub fn filter_components(
    filters: &[f32],
    dim: usize,
    patch_dim: usize,
    count: usize,
) -> Vec<(Vec<f32>, f32)> {
    let mut mean = vec![0.0f64; patch_dim];
    for row in filters.chunks_exact(patch_dim) {
        for (m, v) in mean.iter_mut().zip(row) {
            *m += *v as f64 / dim as f64;
        }
    }
    let mut cov = vec![0.0f64; patch_dim * patch_dim];
    for row in filters.chunks_exact(patch_dim) {
        let centred: Vec<f64> = row.iter().zip(&mean).map(|(v, m)| *v as f64 - m).collect();
        for i in 0..patch_dim {
            for j in 0..patch_dim {
                cov[i * patch_dim + j] += centred[i] * centred[j];
            }
        }
    }
    let (values, vectors) = symmetric_eigen(cov, patch_dim);
    let total: f64 = values.iter().map(|v| v.max(0.0)).sum();
    let mut order: Vec<usize> = (0..patch_dim).collect();
    order.sort_by(|&a, &b| values[b].total_cmp(&values[a]));
    order
        .into_iter()
        .take(count)
        .map(|k| {
            let vector = (0..patch_dim)
                .map(|i| vectors[i * patch_dim + k] as f32)
                .collect();
            let share = if total > 0.0 {
                (values[k].max(0.0) / total) as f32
            } else {
                0.0
            };
            (vector, share)
        })
        .collect()
}

/// Cyclic Jacobi: eigenvalues and eigenvectors (as columns) of a symmetric `n × n` matrix.
fn symmetric_eigen(mut a: Vec<f64>, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut v = vec![0.0; n * n];
    (0..n).for_each(|i| v[i * n + i] = 1.0);
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * n + j] * a[i * n + j])
            .sum();
        if off < 1e-22 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let apq = a[p * n + q];
                if apq.abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for k in 0..n {
                    let (akp, akq) = (a[k * n + p], a[k * n + q]);
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for k in 0..n {
                    let (apk, aqk) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                for k in 0..n {
                    let (vkp, vkq) = (v[k * n + p], v[k * n + q]);
                    v[k * n + p] = c * vkp - s * vkq;
                    v[k * n + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ((0..n).map(|i| a[i * n + i]).collect(), v)
}
