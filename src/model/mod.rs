//! The Vision Transformer of Dosovitskiy et al. (ICLR 2021), eq. 1–4, in plain Burn, and the
//! small CNN it is measured against ([`ConvNet`]); [`Classifier`] is either.
//!
//! Field names follow the seed's PyTorch modules (`patch_embed`, `layers`, `norm1`, `attn`,
//! `qkv`, `proj`, `norm2`, `norm`, `head`) so that [`crate::weights`] maps them by path.

mod ablation;
mod attention;
mod block;
mod classifier;
mod cnn;
mod config;
mod cost;
mod dropout;
mod fused;
mod patch_embed;
mod randomness;
mod thread_setting;
mod vit;

pub use ablation::{Ablation, AblationError, HeadMeans, HeadsOff, LayerAblation, Replacement};
pub use attention::{MultiHeadAttention, attention_softmax};
pub use block::{EncoderBlock, layer_norm};
pub use classifier::{Architecture, Classifier, ModelConfig};
pub use cnn::{CnnConfig, ConvNet, FIRST_CONV_WEIGHT, MAX_CONV_LAYERS};
pub use config::{ConfigError, Preset, VitConfig};
pub use cost::{Budget, CostError, ModelCost};
pub use dropout::{bernoulli_mask, dropout, kernel_dropout, with_mask_stream};
pub use fused::{CpuKernels, Matrix, add_product, fast_math};
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub use fused::{Tile, use_tile};
pub use patch_embed::PatchEmbedding;
pub use randomness::{seed_randomness, seeded};
pub use vit::{StoryPass, VisionTransformer, VitOutput};
