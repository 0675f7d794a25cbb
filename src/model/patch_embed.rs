//! Eq. 1: an image cut into patches, each flattened and projected, a class token in front,
//! learned positions added.

use burn::module::{Module, Param};
use burn::nn::{Dropout, DropoutConfig, Linear, LinearConfig};
use burn::tensor::{Device, Distribution, Tensor};

use super::VitConfig;
use super::{dropout, fused};

/// Eq. 1: flattened patches times E, a class token in front, plus learned 1-D positions.
#[derive(Module, Debug)]
pub struct PatchEmbedding {
    /// The projection E, `[P²·C → D]`.
    pub proj: Linear,
    /// E_pos, `[1, N + 1, D]`.
    pub pos_embedding: Param<Tensor<3>>,
    /// x_class, `[1, 1, D]`.
    pub cls_token: Param<Tensor<3>>,
    pub dropout: Dropout,
    pub patch_size: usize,
}

impl PatchEmbedding {
    pub fn new(config: &VitConfig, device: &Device) -> Self {
        let dim = config.dim;
        // Standard normal, as the seed's `torch.randn` initialises both.
        let normal = Distribution::Normal(0.0, 1.0);
        Self {
            proj: LinearConfig::new(config.patch_dim(), dim).init(device),
            pos_embedding: Param::from_tensor(Tensor::random(
                [1, config.num_tokens(), dim],
                normal,
                device,
            )),
            cls_token: Param::from_tensor(Tensor::random([1, 1, dim], normal, device)),
            dropout: DropoutConfig::new(config.dropout).init(),
            patch_size: config.patch_size,
        }
    }

    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - output: `[batch, num_patches + 1, dim]`
    pub fn forward(&self, images: Tensor<4>) -> Tensor<3> {
        self.place(self.project(images)) // [B, N + 1, D]
    }

    /// Each patch flattened and projected by E: the patch tokens before the class token
    /// joins and the positions are added (what the lab's story shows as step 3).
    ///
    /// # Shapes
    /// - images: `[batch, channels, height, width]`
    /// - output: `[batch, num_patches, dim]`
    pub fn project(&self, images: Tensor<4>) -> Tensor<3> {
        let [batch, channels, height, width] = images.dims();
        let p = self.patch_size;
        let (rows, cols) = (height / p, width / p);
        let patches = images
            .reshape([batch, channels, rows, p, cols, p]) // [B, C, rows, P, cols, P]
            .permute([0, 2, 4, 1, 3, 5]) // [B, rows, cols, C, P, P], as the seed's unfold
            .reshape([batch, rows * cols, channels * p * p]); // [B, N, P²·C]
        fused::linear(&self.proj, &patches) // [B, N, D]
    }

    /// The class token in front of the projected patches, and the learned positions added.
    ///
    /// # Shapes
    /// - tokens: `[batch, num_patches, dim]`
    /// - output: `[batch, num_patches + 1, dim]`
    pub fn place(&self, tokens: Tensor<3>) -> Tensor<3> {
        let [batch, _, dim] = tokens.dims();
        let cls = self.cls_token.val().expand([batch, 1, dim]); // [B, 1, D]
        let tokens = Tensor::cat(vec![cls, tokens], 1); // [B, N + 1, D]
        let tokens = tokens + self.pos_embedding.val(); // [B, N + 1, D]
        dropout(&self.dropout, tokens)
    }
}
