//! Fused kernels for the encoder block's LayerNorm, attention, bias with GELU and bias with
//! the residual on both devices, and for the linear layers on the CPU.
//!
//! On a GPU (burn-wgpu: WebGPU in the browser, Vulkan, Metal or DirectX natively) a model this
//! small is bound by the number of kernel dispatches, not by arithmetic: Burn's own ops spend
//! about 45 dispatches on an encoder block (LayerNorm alone is 8, softmax 5, GELU 5, and the
//! QKV split and head merge are copies), these spend about 10 (`kernels.rs`, `launch.rs`).
//!
//! On the CPU (flex) the cost is passes over memory and calls per element: while recording
//! gradients Burn composes LayerNorm and softmax of a dozen ops each, every one a pass, an
//! allocation and a node of the graph, and evaluates `exp` and `erf` one element at a time.
//! The kernels here (`cpu.rs`, `cpu_kernels.rs`) are one pass each, forward and backward, with
//! vectorised `exp` and `erf` (`fast_math.rs`); the linear layers are one `gemm` each
//! (`cpu_linear.rs`), and one product of our own in the worker (`cpu_matmul.rs`).
//!
//! Each function returns `None` where its kernel does not run, and the caller composes Burn's
//! ops instead: on a GPU, for the kernels without a GPU backward pass (a bias with GELU or with
//! the residual) while recording gradients; on the CPU, for the residual's while recording
//! gradients (nothing to gain), for tensors other than `f32`, and where [`CpuKernels::Composed`]
//! is asked for (the benchmark's "before", and the tests that hold the two paths to each other).
//! Same formulas, same results to float rounding (tests hold both paths to each other and to
//! PyTorch's logits).

#[cfg(feature = "train")]
mod autodiff;
mod cpu;
mod cpu_kernels;
mod cpu_linear;
mod cpu_matmul;
pub mod fast_math;
// The product itself for the native tests, which try it at every block and tile edge.
pub use cpu_matmul::{Matrix, add_product};
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub use cpu_matmul::{Tile, use_tile};
#[cfg(feature = "gpu")]
mod kernels;
#[cfg(feature = "gpu")]
mod launch;

use std::cell::Cell;

use burn::backend::{Backend, Dispatch, backend_extension, tensor::FloatTensor};
use burn::nn::{Dropout, LayerNorm, Linear};
use burn::tensor::{DType, Device, Tensor};

use super::kernel_dropout;
use super::thread_setting::while_set;

/// `nn.LayerNorm`'s default, which the seed's model and Burn's `LayerNormConfig` share.
const LAYER_NORM_EPSILON: f32 = 1e-5;

// The page's own binary (no `train` feature) only classifies: the gradients' kernels are
// implemented but never called there.
#[cfg_attr(not(feature = "train"), allow(dead_code))]
#[backend_extension(
    Cube: cfg(feature = "gpu"),
    Flex,
    Autodiff: cfg(feature = "train"),
    Fusion: cfg(feature = "fusion")
)]
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

    /// The gradients of [`VitKernels::fused_bias_gelu`] for its input and bias.
    #[fusion(meta = bias_gelu_gradients)]
    fn fused_bias_gelu_backward(
        input: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        d_output: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>);

    /// `input · weight + bias` over the last axis, as Burn's `linear`.
    #[fusion(meta = linear_output)]
    fn fused_linear(
        input: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self>;

    /// `input · weight` over the last axis: [`VitKernels::fused_linear`] without a bias.
    #[fusion(meta = product_output)]
    fn fused_product(input: FloatTensor<Self>, weight: FloatTensor<Self>) -> FloatTensor<Self>;

    /// The gradient of [`VitKernels::fused_linear`] for its input: `d_output · weightᵀ`.
    #[fusion(meta = linear_input_gradient)]
    fn fused_linear_input_backward(
        weight: FloatTensor<Self>,
        d_output: FloatTensor<Self>,
    ) -> FloatTensor<Self>;

    /// The gradient of [`VitKernels::fused_linear`] for its weight: `inputᵀ · d_output`.
    #[fusion(meta = linear_weight_gradient)]
    fn fused_linear_weight_backward(
        input: FloatTensor<Self>,
        d_output: FloatTensor<Self>,
    ) -> FloatTensor<Self>;

    /// The gradient of [`VitKernels::fused_linear`] for its bias: `d_output` summed over rows.
    #[fusion(meta = linear_bias_gradient)]
    fn fused_linear_bias_backward(d_output: FloatTensor<Self>) -> FloatTensor<Self>;

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

/// The shapes [`VitKernels::fused_bias_gelu_backward`] returns: the input's, the bias's.
#[cfg(feature = "fusion")]
fn bias_gelu_gradients(
    input: &burn::backend::fusion::custom::TensorSpec,
    bias: &burn::backend::fusion::custom::TensorSpec,
    _d_output: &burn::backend::fusion::custom::TensorSpec,
) -> (
    burn::backend::fusion::custom::TensorSpec,
    burn::backend::fusion::custom::TensorSpec,
) {
    (input.clone(), bias.clone())
}

/// `spec`'s shape with its last axis `last`.
#[cfg(feature = "fusion")]
fn with_last(
    spec: &burn::backend::fusion::custom::TensorSpec,
    last: usize,
) -> burn::backend::fusion::custom::TensorSpec {
    let mut dims = spec.shape.to_vec();
    if let Some(axis) = dims.last_mut() {
        *axis = last;
    }
    burn::backend::fusion::custom::TensorSpec::new(dims.into(), spec.dtype)
}

/// The shape [`VitKernels::fused_linear`] returns: the input's with the weight's outputs.
#[cfg(feature = "fusion")]
fn linear_output(
    input: &burn::backend::fusion::custom::TensorSpec,
    weight: &burn::backend::fusion::custom::TensorSpec,
    _bias: &burn::backend::fusion::custom::TensorSpec,
) -> burn::backend::fusion::custom::TensorSpec {
    with_last(input, weight.shape[1])
}

/// The shape [`VitKernels::fused_product`] returns, as [`linear_output`].
#[cfg(feature = "fusion")]
fn product_output(
    input: &burn::backend::fusion::custom::TensorSpec,
    weight: &burn::backend::fusion::custom::TensorSpec,
) -> burn::backend::fusion::custom::TensorSpec {
    with_last(input, weight.shape[1])
}

/// The shape [`VitKernels::fused_linear_input_backward`] returns: `d_output`'s with the
/// weight's inputs.
#[cfg(feature = "fusion")]
fn linear_input_gradient(
    weight: &burn::backend::fusion::custom::TensorSpec,
    d_output: &burn::backend::fusion::custom::TensorSpec,
) -> burn::backend::fusion::custom::TensorSpec {
    with_last(d_output, weight.shape[0])
}

/// The shape [`VitKernels::fused_linear_weight_backward`] returns: `[inputs, outputs]`.
#[cfg(feature = "fusion")]
fn linear_weight_gradient(
    input: &burn::backend::fusion::custom::TensorSpec,
    d_output: &burn::backend::fusion::custom::TensorSpec,
) -> burn::backend::fusion::custom::TensorSpec {
    let last =
        |spec: &burn::backend::fusion::custom::TensorSpec| spec.shape[spec.shape.num_dims() - 1];
    burn::backend::fusion::custom::TensorSpec::new(
        [last(input), last(d_output)].into(),
        input.dtype,
    )
}

/// The shape [`VitKernels::fused_linear_bias_backward`] returns: `[outputs]`.
#[cfg(feature = "fusion")]
fn linear_bias_gradient(
    d_output: &burn::backend::fusion::custom::TensorSpec,
) -> burn::backend::fusion::custom::TensorSpec {
    let outputs = d_output.shape[d_output.shape.num_dims() - 1];
    burn::backend::fusion::custom::TensorSpec::new([outputs].into(), d_output.dtype)
}

/// Which code runs the encoder block on the CPU: these kernels, or Burn's ops composed as on
/// any backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuKernels {
    Fused,
    Composed,
}

thread_local! {
    /// Per thread, as the model's forward pass runs on the thread that calls it: tests that
    /// compare the two paths run side by side.
    static CPU_KERNELS: Cell<CpuKernels> = const { Cell::new(CpuKernels::Fused) };
}

impl CpuKernels {
    /// Chooses the CPU's code for the forward and backward passes this thread runs from now
    /// on ([`CpuKernels::Fused`] unless told).
    pub fn choose(self) {
        CPU_KERNELS.set(self);
    }

    pub fn chosen() -> Self {
        CPU_KERNELS.get()
    }

    /// Runs `work` with this choice on this thread, then puts back the thread's own
    /// (`thread_setting.rs` says why).
    pub fn while_running<T>(self, work: impl FnOnce() -> T) -> T {
        while_set(&CPU_KERNELS, self, work)
    }
}

/// Where the fused kernels run on a tensor: which device, and whether they have every pass
/// that is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Gpu,
    GpuRecording,
    Cpu,
    CpuRecording,
    /// Burn's ops: a CPU told [`CpuKernels::Composed`], or a dtype other than `f32`.
    Composed,
}

impl Place {
    /// The CPU's own kernels, recording gradients or not.
    fn on_cpu(self) -> bool {
        matches!(self, Self::Cpu | Self::CpuRecording)
    }
}

fn place<const D: usize>(tensor: &Tensor<D>) -> Place {
    let device = tensor.device();
    let recording = device.is_autodiff();
    if device.clone().inner() != Device::flex() {
        return if recording {
            Place::GpuRecording
        } else {
            Place::Gpu
        };
    }
    if CpuKernels::chosen() == CpuKernels::Composed || tensor.dtype() != DType::F32 {
        return Place::Composed;
    }
    if recording {
        Place::CpuRecording
    } else {
        Place::Cpu
    }
}

/// `norm(input)` in one kernel (its gradient in two).
///
/// # Shapes
/// - input, output: `[..., dim]`
pub fn layer_norm<const D: usize>(norm: &LayerNorm, input: &Tensor<D>) -> Option<Tensor<D>> {
    if place(input) == Place::Composed {
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
    let [_, _, width] = qkv.dims();
    let head_dim = width / 3 / heads.max(1);
    let wider_than_the_cpu_takes = head_dim > cpu_kernels::MAX_HEAD_DIM;
    match place(qkv) {
        Place::Composed => return None,
        place if place.on_cpu() && wider_than_the_cpu_takes => return None,
        _ => {}
    }
    let scale = (head_dim as f32).powf(-0.5);
    let (keep, seed) = kernel_dropout(dropout, &device).unwrap_or((1.0, 0));
    let (mixed, attention) =
        Dispatch::fused_attention(qkv.clone().into_dispatch(), heads, scale, keep, seed);
    Some((
        Tensor::from_dispatch(mixed),
        Tensor::from_dispatch(attention),
    ))
}

/// `linear(input)`: one `gemm` into the bias's rows on the CPU (`cpu_linear.rs` says why),
/// Burn's `Linear` elsewhere.
///
/// # Shapes
/// - input: `[..., in]`
/// - output: `[..., out]`
pub fn linear<const D: usize>(linear: &Linear, input: &Tensor<D>) -> Tensor<D> {
    if !place(input).on_cpu() {
        return linear.forward(input.clone());
    }
    let (input, weight) = (
        input.clone().into_dispatch(),
        linear.weight.val().into_dispatch(),
    );
    Tensor::from_dispatch(match &linear.bias {
        Some(bias) => Dispatch::fused_linear(input, weight, bias.val().into_dispatch()),
        None => Dispatch::fused_product(input, weight),
    })
}

/// `input · weight`, without the layer's bias (which the caller's kernel adds): [`linear`]'s
/// kernel on the CPU, Burn's matmul elsewhere.
fn product(layer: &Linear, input: &Tensor<3>) -> Tensor<3> {
    if place(input).on_cpu() {
        return Tensor::from_dispatch(Dispatch::fused_product(
            input.clone().into_dispatch(),
            layer.weight.val().into_dispatch(),
        ));
    }
    input.clone().matmul(layer.weight.val().unsqueeze::<3>())
}

/// `gelu(linear(input))`: Burn's matmul, then the bias and GELU in one kernel (its gradient
/// in one more on the CPU; a GPU composes Burn's ops while recording gradients).
///
/// # Shapes
/// - input: `[batch, tokens, in]`
/// - output: `[batch, tokens, out]`
pub fn linear_gelu(linear: &Linear, input: &Tensor<3>) -> Option<Tensor<3>> {
    if matches!(place(input), Place::GpuRecording | Place::Composed) {
        return None;
    }
    let bias = linear.bias.as_ref()?.val();
    let product = product(linear, input); // [B, N, out]
    Some(Tensor::from_dispatch(Dispatch::fused_bias_gelu(
        product.into_dispatch(),
        bias.into_dispatch(),
    )))
}

/// `residual + linear(input)`: Burn's matmul, then the bias and the residual in one kernel.
/// Inference only: recording gradients, Burn's two additions cost about what this would.
///
/// # Shapes
/// - input: `[batch, tokens, in]`
/// - residual, output: `[batch, tokens, out]`
pub fn linear_residual(
    linear: &Linear,
    input: &Tensor<3>,
    residual: &Tensor<3>,
) -> Option<Tensor<3>> {
    if !matches!(place(input), Place::Gpu | Place::Cpu) {
        return None;
    }
    let bias = linear.bias.as_ref()?.val();
    let product = product(linear, input); // [B, N, out]
    Some(Tensor::from_dispatch(Dispatch::fused_bias_residual(
        product.into_dispatch(),
        bias.into_dispatch(),
        residual.clone().into_dispatch(),
    )))
}
