//! [`VitKernels`] on flex, Burn's CPU backend: contiguous `f32` inputs in, fresh contiguous
//! outputs out, the arithmetic in `cpu_kernels.rs`. The model calls these only on `f32`
//! tensors (`mod.rs` checks), which every model here is.

use burn::backend::Flex;
use burn::tensor::{Bytes, DType, Shape};
use burn_flex::{FlexTensor, Layout};

use super::VitKernels;
use super::cpu_kernels::{self, AttentionShape};
use super::cpu_linear;

/// `tensor`'s values in order, copied only where its layout is not already contiguous.
fn contiguous(tensor: FlexTensor) -> FlexTensor {
    tensor.to_contiguous()
}

fn values(tensor: &FlexTensor) -> &[f32] {
    tensor
        .as_slice::<f32>()
        .expect("the fused CPU kernels take contiguous f32 tensors (mod.rs checks the dtype)")
}

fn tensor(values: Vec<f32>, shape: Shape) -> FlexTensor {
    FlexTensor::new(
        Bytes::from_elems(values),
        Layout::contiguous(shape),
        DType::F32,
    )
}

fn shape(tensor: &FlexTensor) -> Shape {
    tensor.layout().shape().clone()
}

/// The length of `tensor`'s last axis.
fn last(tensor: &FlexTensor) -> usize {
    let shape = tensor.layout().shape();
    shape
        .num_dims()
        .checked_sub(1)
        .map_or(1, |axis| shape[axis])
}

/// `like`'s shape with its last axis `last`.
fn with_last(like: &FlexTensor, last: usize) -> Shape {
    let mut dims = shape(like).to_vec();
    if let Some(axis) = dims.last_mut() {
        *axis = last;
    }
    Shape::from(dims)
}

fn attention_shape(
    qkv: &FlexTensor,
    heads: usize,
    scale: f32,
    keep: f32,
    seed: u32,
) -> AttentionShape {
    let dims = shape(qkv);
    let (tokens, width) = (dims[1], dims[2]);
    AttentionShape {
        tokens,
        heads,
        head_dim: width / 3 / heads.max(1),
        scale,
        keep,
        seed,
    }
}

fn linear(input: FlexTensor, weight: FlexTensor, bias: Option<FlexTensor>) -> FlexTensor {
    let (input, weight) = (contiguous(input), contiguous(weight));
    let bias = bias.map(contiguous);
    let inputs = last(&input);
    let output = cpu_linear::linear(
        values(&input),
        values(&weight),
        bias.as_ref().map(values),
        inputs,
    );
    tensor(output, with_last(&input, last(&weight)))
}

impl VitKernels for Flex {
    fn fused_layer_norm(
        input: FlexTensor,
        gamma: FlexTensor,
        beta: FlexTensor,
        epsilon: f32,
    ) -> FlexTensor {
        let (input, gamma, beta) = (contiguous(input), contiguous(gamma), contiguous(beta));
        let output =
            cpu_kernels::layer_norm(values(&input), values(&gamma), values(&beta), epsilon);
        tensor(output, shape(&input))
    }

    fn fused_layer_norm_backward(
        input: FlexTensor,
        gamma: FlexTensor,
        d_output: FlexTensor,
        epsilon: f32,
    ) -> (FlexTensor, FlexTensor, FlexTensor) {
        let (input, gamma, d_output) = (contiguous(input), contiguous(gamma), contiguous(d_output));
        let (d_input, d_gamma, d_beta) = cpu_kernels::layer_norm_backward(
            values(&input),
            values(&gamma),
            values(&d_output),
            epsilon,
        );
        (
            tensor(d_input, shape(&input)),
            tensor(d_gamma, shape(&gamma)),
            tensor(d_beta, shape(&gamma)),
        )
    }

    fn fused_attention(
        qkv: FlexTensor,
        heads: usize,
        scale: f32,
        keep: f32,
        seed: u32,
    ) -> (FlexTensor, FlexTensor) {
        let qkv = contiguous(qkv);
        let attention = attention_shape(&qkv, heads, scale, keep, seed);
        let dims = shape(&qkv);
        let (batch, tokens, width) = (dims[0], dims[1], dims[2]);
        let (mixed, probabilities) = cpu_kernels::attention(values(&qkv), attention);
        (
            tensor(mixed, Shape::new([batch, tokens, width / 3])),
            tensor(probabilities, Shape::new([batch, heads, tokens, tokens])),
        )
    }

    fn fused_attention_backward(
        qkv: FlexTensor,
        probabilities: FlexTensor,
        d_mixed: FlexTensor,
        heads: usize,
        scale: f32,
        keep: f32,
        seed: u32,
    ) -> FlexTensor {
        let (qkv, probabilities, d_mixed) = (
            contiguous(qkv),
            contiguous(probabilities),
            contiguous(d_mixed),
        );
        let attention = attention_shape(&qkv, heads, scale, keep, seed);
        let d_qkv = cpu_kernels::attention_backward(
            values(&qkv),
            values(&probabilities),
            values(&d_mixed),
            attention,
        );
        tensor(d_qkv, shape(&qkv))
    }

    fn fused_bias_gelu(input: FlexTensor, bias: FlexTensor) -> FlexTensor {
        let (input, bias) = (contiguous(input), contiguous(bias));
        let output = cpu_kernels::bias_gelu(values(&input), values(&bias));
        tensor(output, shape(&input))
    }

    fn fused_bias_gelu_backward(
        input: FlexTensor,
        bias: FlexTensor,
        d_output: FlexTensor,
    ) -> (FlexTensor, FlexTensor) {
        let (input, bias, d_output) = (contiguous(input), contiguous(bias), contiguous(d_output));
        let (d_input, d_bias) =
            cpu_kernels::bias_gelu_backward(values(&input), values(&bias), values(&d_output));
        (tensor(d_input, shape(&input)), tensor(d_bias, shape(&bias)))
    }

    fn fused_linear(input: FlexTensor, weight: FlexTensor, bias: FlexTensor) -> FlexTensor {
        linear(input, weight, Some(bias))
    }

    fn fused_product(input: FlexTensor, weight: FlexTensor) -> FlexTensor {
        linear(input, weight, None)
    }

    fn fused_linear_input_backward(weight: FlexTensor, d_output: FlexTensor) -> FlexTensor {
        let (weight, d_output) = (contiguous(weight), contiguous(d_output));
        let inputs = shape(&weight)[0];
        let d_input = cpu_linear::linear_input_backward(values(&weight), values(&d_output), inputs);
        tensor(d_input, with_last(&d_output, inputs))
    }

    fn fused_linear_weight_backward(input: FlexTensor, d_output: FlexTensor) -> FlexTensor {
        let (input, d_output) = (contiguous(input), contiguous(d_output));
        let (inputs, outputs) = (last(&input), last(&d_output));
        let d_weight =
            cpu_linear::linear_weight_backward(values(&input), values(&d_output), inputs, outputs);
        tensor(d_weight, Shape::new([inputs, outputs]))
    }

    fn fused_linear_bias_backward(d_output: FlexTensor) -> FlexTensor {
        let d_output = contiguous(d_output);
        let outputs = last(&d_output);
        let d_bias = cpu_kernels::column_sums(values(&d_output), outputs);
        tensor(d_bias, Shape::new([outputs]))
    }

    fn fused_bias_residual(
        input: FlexTensor,
        bias: FlexTensor,
        residual: FlexTensor,
    ) -> FlexTensor {
        let (input, bias, residual) = (contiguous(input), contiguous(bias), contiguous(residual));
        let output = cpu_kernels::bias_residual(values(&input), values(&bias), values(&residual));
        tensor(output, shape(&input))
    }
}
