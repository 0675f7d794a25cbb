//! Fused kernels for the forward pass on a GPU (burn-wgpu: WebGPU in the browser, Vulkan,
//! Metal or DirectX natively). On such a device a model this small is bound by the number of
//! kernel dispatches, not by arithmetic: Burn's own ops spend about 45 dispatches on an
//! encoder block (LayerNorm alone is 8, softmax 5, GELU 5, and the QKV split and head merge
//! are copies), these spend about 10.
//!
//! Each function returns `None` where its kernel does not run, and the caller composes Burn's
//! ops instead: on the CPU, whose fused Burn ops are already one pass each, and, for the
//! kernels without a backward pass (a bias with GELU or with the residual), while recording
//! gradients. LayerNorm and attention have their own backward kernels (`autodiff.rs`), so
//! training on a GPU uses them too. Same formulas, same results to float rounding (the
//! browser tests hold both paths to each other and to PyTorch's logits).

mod autodiff;
mod kernels;
mod launch;

use burn::backend::{Backend, Dispatch, backend_extension, tensor::FloatTensor};
use burn::nn::{Dropout, LayerNorm, Linear};
use burn::tensor::{Device, Tensor};

use super::kernel_dropout;

/// `nn.LayerNorm`'s default, which the seed's model and Burn's `LayerNormConfig` share.
const LAYER_NORM_EPSILON: f32 = 1e-5;

#[backend_extension(Cube, Autodiff, Fusion: cfg(feature = "fusion"))]
pub trait VitKernels: Backend {
    #[fusion(dtype = input, shape = input)]
    fn fused_layer_norm(
        input: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f32,
    ) -> FloatTensor<Self>;

    #[fusion(meta = layer_norm_gradients)]
    fn fused_layer_norm_backward(
        input: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        d_output: FloatTensor<Self>,
        epsilon: f32,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>);

    #[fusion(meta = attention_outputs)]
    fn fused_attention(
        qkv: FloatTensor<Self>,
        heads: usize,
        scale: f32,
        keep: f32,
        seed: u32,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);

    #[fusion(dtype = qkv, shape = qkv)]
    #[allow(clippy::too_many_arguments)]
    fn fused_attention_backward(
        qkv: FloatTensor<Self>,
        probabilities: FloatTensor<Self>,
        d_mixed: FloatTensor<Self>,
        heads: usize,
        scale: f32,
        keep: f32,
        seed: u32,
    ) -> FloatTensor<Self>;

    #[fusion(dtype = input, shape = input)]
    fn fused_bias_gelu(input: FloatTensor<Self>, bias: FloatTensor<Self>) -> FloatTensor<Self>;

    #[fusion(dtype = input, shape = input)]
    fn fused_bias_residual(
        input: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        residual: FloatTensor<Self>,
    ) -> FloatTensor<Self>;
}

/// The shapes [`VitKernels::fused_attention`] returns, for Burn's fusion to plan with.
#[cfg(feature = "fusion")]
fn attention_outputs(
    qkv: &burn::backend::fusion::custom::TensorSpec,
    heads: &usize,
    _scale: &f32,
    _keep: &f32,
    _seed: &u32,
) -> (
    burn::backend::fusion::custom::TensorSpec,
    burn::backend::fusion::custom::TensorSpec,
) {
    use burn::backend::fusion::custom::TensorSpec;
    let [batch, tokens, width] = [qkv.shape[0], qkv.shape[1], qkv.shape[2]];
    (
        TensorSpec::new([batch, tokens, width / 3].into(), qkv.dtype),
        TensorSpec::new([batch, *heads, tokens, tokens].into(), qkv.dtype),
    )
}

/// The shapes [`VitKernels::fused_layer_norm_backward`] returns: the input's, gamma's twice.
#[cfg(feature = "fusion")]
fn layer_norm_gradients(
    input: &burn::backend::fusion::custom::TensorSpec,
    gamma: &burn::backend::fusion::custom::TensorSpec,
    _d_output: &burn::backend::fusion::custom::TensorSpec,
    _epsilon: &f32,
) -> (
    burn::backend::fusion::custom::TensorSpec,
    burn::backend::fusion::custom::TensorSpec,
    burn::backend::fusion::custom::TensorSpec,
) {
    (input.clone(), gamma.clone(), gamma.clone())
}

/// Whether `device` is a GPU: the kernels with a backward pass (LayerNorm, attention) run
/// there in training too.
fn on_gpu(device: &Device) -> bool {
    device.clone().inner() != Device::flex()
}

/// Whether the kernels without a backward pass run on `device`: a GPU, not recording
/// gradients.
fn inference_on_gpu(device: &Device) -> bool {
    on_gpu(device) && !device.is_autodiff()
}

/// `norm(input)` in one kernel (its gradient in two).
///
/// # Shapes
/// - input, output: `[..., dim]`
pub fn layer_norm<const D: usize>(norm: &LayerNorm, input: &Tensor<D>) -> Option<Tensor<D>> {
    if !on_gpu(&input.device()) {
        return None;
    }
    let beta = norm.beta.as_ref()?.val();
    Some(Tensor::from_dispatch(Dispatch::fused_layer_norm(
        input.clone().into_dispatch(),
        norm.gamma.val().into_dispatch(),
        beta.into_dispatch(),
        LAYER_NORM_EPSILON,
    )))
}

/// Attention from the fused QKV projection's output, in one kernel (its gradient in two):
/// the heads' outputs side by side, after `dropout` on the probabilities where it applies,
/// and the probabilities before it.
///
/// # Shapes
/// - qkv: `[batch, tokens, 3 · dim]`
/// - output: `[batch, tokens, dim]`
/// - attention: `[batch, heads, tokens, tokens]`
pub fn attention(
    qkv: &Tensor<3>,
    heads: usize,
    dropout: &Dropout,
) -> Option<(Tensor<3>, Tensor<4>)> {
    let device = qkv.device();
    if !on_gpu(&device) {
        return None;
    }
    let [_, _, width] = qkv.dims();
    let scale = ((width / 3 / heads) as f32).powf(-0.5);
    let (keep, seed) = kernel_dropout(dropout, &device).unwrap_or((1.0, 0));
    let (mixed, attention) =
        Dispatch::fused_attention(qkv.clone().into_dispatch(), heads, scale, keep, seed);
    Some((
        Tensor::from_dispatch(mixed),
        Tensor::from_dispatch(attention),
    ))
}

/// `gelu(linear(input))`: Burn's matmul, then the bias and GELU in one kernel. Inference only.
///
/// # Shapes
/// - input: `[batch, tokens, in]`
/// - output: `[batch, tokens, out]`
pub fn linear_gelu(linear: &Linear, input: &Tensor<3>) -> Option<Tensor<3>> {
    if !inference_on_gpu(&input.device()) {
        return None;
    }
    let bias = linear.bias.as_ref()?.val();
    let product = input.clone().matmul(linear.weight.val().unsqueeze::<3>()); // [B, N, out]
    Some(Tensor::from_dispatch(Dispatch::fused_bias_gelu(
        product.into_dispatch(),
        bias.into_dispatch(),
    )))
}

/// `residual + linear(input)`: Burn's matmul, then the bias and the residual in one kernel.
/// Inference only.
///
/// # Shapes
/// - input: `[batch, tokens, in]`
/// - residual, output: `[batch, tokens, out]`
pub fn linear_residual(
    linear: &Linear,
    input: &Tensor<3>,
    residual: &Tensor<3>,
) -> Option<Tensor<3>> {
    if !inference_on_gpu(&input.device()) {
        return None;
    }
    let bias = linear.bias.as_ref()?.val();
    let product = input.clone().matmul(linear.weight.val().unsqueeze::<3>()); // [B, N, out]
    Some(Tensor::from_dispatch(Dispatch::fused_bias_residual(
        product.into_dispatch(),
        bias.into_dispatch(),
        residual.clone().into_dispatch(),
    )))
}
