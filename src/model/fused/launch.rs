//! [`VitKernels`] on CubeCL: output buffers, contiguous inputs, one launch each.

use burn::backend::cubecl::dtype_to_storage_type;
use burn::backend::ops::{ActivationOps, FloatTensorOps, ModuleOps};
use burn::tensor::Shape;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_dtype;
use burn_cubecl::tensor::CubeTensor;
use burn_cubecl::{CubeBackend, cubecl};
use cubecl::{CubeCount, CubeDim, calculate_cube_count_elemwise};

use super::{VitKernels, kernels};

/// A fresh contiguous tensor beside `like`.
fn empty_like(like: &CubeTensor, shape: Shape) -> CubeTensor {
    empty_device_dtype(like.client.clone(), like.device.clone(), shape, like.dtype)
}

/// Enough cubes for `units` units, one per row or element.
fn grid(tensor: &CubeTensor, units: usize) -> (CubeCount, CubeDim) {
    let cube_dim = CubeDim::new(&tensor.client, units);
    (
        calculate_cube_count_elemwise(&tensor.client, units, cube_dim),
        cube_dim,
    )
}

impl VitKernels for CubeBackend {
    fn fused_layer_norm(
        input: CubeTensor,
        gamma: CubeTensor,
        beta: CubeTensor,
        epsilon: f32,
    ) -> CubeTensor {
        let (input, gamma, beta) = (
            into_contiguous(input),
            into_contiguous(gamma),
            into_contiguous(beta),
        );
        let shape = input.meta.shape().clone();
        let rows = shape.num_elements() / gamma.meta.shape().num_elements().max(1);
        let output = empty_like(&input, shape);
        let (cubes, cube_dim) = grid(&input, rows);
        let dtype = dtype_to_storage_type(input.dtype);
        kernels::layer_norm::launch(
            &output.client,
            cubes,
            cube_dim,
            input.into_tensor_arg(),
            gamma.into_tensor_arg(),
            beta.into_tensor_arg(),
            output.clone().into_tensor_arg(),
            epsilon,
            dtype,
        );
        output
    }

    fn fused_layer_norm_backward(
        input: CubeTensor,
        gamma: CubeTensor,
        d_output: CubeTensor,
        epsilon: f32,
    ) -> (CubeTensor, CubeTensor, CubeTensor) {
        let (input, gamma, d_output) = (
            into_contiguous(input),
            into_contiguous(gamma),
            into_contiguous(d_output),
        );
        let shape = input.meta.shape().clone();
        let dim = gamma.meta.shape().num_elements();
        let rows = shape.num_elements() / dim.max(1);
        let d_input = empty_like(&input, shape);
        let statistics = empty_like(&input, Shape::new([rows, 2]));
        let d_gamma = empty_like(&gamma, Shape::new([dim]));
        let d_beta = empty_like(&gamma, Shape::new([dim]));
        let dtype = dtype_to_storage_type(input.dtype);
        let (cubes, cube_dim) = grid(&input, rows);
        kernels::layer_norm_backward_input::launch(
            &input.client.clone(),
            cubes,
            cube_dim,
            input.clone().into_tensor_arg(),
            gamma.into_tensor_arg(),
            d_output.clone().into_tensor_arg(),
            d_input.clone().into_tensor_arg(),
            statistics.clone().into_tensor_arg(),
            epsilon,
            dtype,
        );
        let (cubes, cube_dim) = grid(&input, dim);
        kernels::layer_norm_backward_parameters::launch(
            &input.client.clone(),
            cubes,
            cube_dim,
            input.into_tensor_arg(),
            d_output.into_tensor_arg(),
            statistics.into_tensor_arg(),
            d_gamma.clone().into_tensor_arg(),
            d_beta.clone().into_tensor_arg(),
            dtype,
        );
        (d_input, d_gamma, d_beta)
    }

    fn fused_attention(
        qkv: CubeTensor,
        heads: usize,
        scale: f32,
        keep: f32,
        seed: u32,
    ) -> (CubeTensor, CubeTensor) {
        let qkv = into_contiguous(qkv);
        let [batch, tokens, width] = qkv.meta.shape().dims();
        let mixed = empty_like(&qkv, Shape::new([batch, tokens, width / 3]));
        let probabilities = empty_like(&qkv, Shape::new([batch, heads, tokens, tokens]));
        let (cubes, cube_dim) = grid(&qkv, batch * heads * tokens);
        let dtype = dtype_to_storage_type(qkv.dtype);
        kernels::attention::launch(
            &qkv.client.clone(),
            cubes,
            cube_dim,
            qkv.into_tensor_arg(),
            mixed.clone().into_tensor_arg(),
            probabilities.clone().into_tensor_arg(),
            heads as u32,
            scale,
            keep,
            seed,
            dtype,
        );
        (mixed, probabilities)
    }

    fn fused_attention_backward(
        qkv: CubeTensor,
        probabilities: CubeTensor,
        d_mixed: CubeTensor,
        heads: usize,
        scale: f32,
        keep: f32,
        seed: u32,
    ) -> CubeTensor {
        let (qkv, probabilities, d_mixed) = (
            into_contiguous(qkv),
            into_contiguous(probabilities),
            into_contiguous(d_mixed),
        );
        let [batch, tokens, _] = qkv.meta.shape().dims();
        let d_qkv = empty_like(&qkv, qkv.meta.shape().clone());
        let scores = empty_like(&qkv, probabilities.meta.shape().clone());
        let (cubes, cube_dim) = grid(&qkv, batch * heads * tokens);
        let dtype = dtype_to_storage_type(qkv.dtype);
        kernels::attention_backward_queries::launch(
            &qkv.client.clone(),
            cubes.clone(),
            cube_dim,
            qkv.clone().into_tensor_arg(),
            probabilities.clone().into_tensor_arg(),
            d_mixed.clone().into_tensor_arg(),
            scores.clone().into_tensor_arg(),
            d_qkv.clone().into_tensor_arg(),
            heads as u32,
            scale,
            keep,
            seed,
            dtype,
        );
        kernels::attention_backward_keys::launch(
            &qkv.client.clone(),
            cubes,
            cube_dim,
            qkv.into_tensor_arg(),
            probabilities.into_tensor_arg(),
            d_mixed.into_tensor_arg(),
            scores.into_tensor_arg(),
            d_qkv.clone().into_tensor_arg(),
            heads as u32,
            scale,
            keep,
            seed,
            dtype,
        );
        d_qkv
    }

    fn fused_bias_gelu(input: CubeTensor, bias: CubeTensor) -> CubeTensor {
        let (input, bias) = (into_contiguous(input), into_contiguous(bias));
        let shape = input.meta.shape().clone();
        let output = empty_like(&input, shape.clone());
        let (cubes, cube_dim) = grid(&input, shape.num_elements());
        let dtype = dtype_to_storage_type(input.dtype);
        kernels::bias_gelu::launch(
            &output.client,
            cubes,
            cube_dim,
            input.into_tensor_arg(),
            bias.into_tensor_arg(),
            output.clone().into_tensor_arg(),
            dtype,
        );
        output
    }

    /// Composed of Burn's ops: the model records gradients through this kernel only on the
    /// CPU (`mod.rs`), so a GPU reaches this only if that changes.
    fn fused_bias_gelu_backward(
        input: CubeTensor,
        bias: CubeTensor,
        d_output: CubeTensor,
    ) -> (CubeTensor, CubeTensor) {
        let shape = input.meta.shape().clone();
        let width = bias.meta.shape().num_elements();
        let rows = shape.num_elements() / width.max(1);
        let table = Shape::new([rows, width]);
        let bias = Self::float_expand(
            Self::float_reshape(bias, Shape::new([1, width])),
            table.clone(),
        );
        let pre_activation = Self::float_add(Self::float_reshape(input, table.clone()), bias);
        let d_input = Self::gelu_backward(pre_activation, Self::float_reshape(d_output, table));
        let d_bias =
            Self::float_reshape(Self::float_sum_dim(d_input.clone(), 0), Shape::new([width]));
        (Self::float_reshape(d_input, shape), d_bias)
    }

    /// Burn's own linear and its gradients: the model calls these on the CPU only (`mod.rs`).
    fn fused_linear(input: CubeTensor, weight: CubeTensor, bias: CubeTensor) -> CubeTensor {
        Self::linear(input, weight, Some(bias))
    }

    fn fused_product(input: CubeTensor, weight: CubeTensor) -> CubeTensor {
        Self::linear(input, weight, None)
    }

    fn fused_linear_input_backward(weight: CubeTensor, d_output: CubeTensor) -> CubeTensor {
        Self::linear_x_backward(weight, d_output)
    }

    fn fused_linear_weight_backward(input: CubeTensor, d_output: CubeTensor) -> CubeTensor {
        Self::linear_weight_backward(input, d_output)
    }

    fn fused_linear_bias_backward(d_output: CubeTensor) -> CubeTensor {
        Self::linear_bias_backward(d_output)
    }

    fn fused_bias_residual(
        input: CubeTensor,
        bias: CubeTensor,
        residual: CubeTensor,
    ) -> CubeTensor {
        let (input, bias, residual) = (
            into_contiguous(input),
            into_contiguous(bias),
            into_contiguous(residual),
        );
        let shape = input.meta.shape().clone();
        let output = empty_like(&input, shape.clone());
        let (cubes, cube_dim) = grid(&input, shape.num_elements());
        let dtype = dtype_to_storage_type(input.dtype);
        kernels::bias_residual::launch(
            &output.client,
            cubes,
            cube_dim,
            input.into_tensor_arg(),
            bias.into_tensor_arg(),
            residual.into_tensor_arg(),
            output.clone().into_tensor_arg(),
            dtype,
        );
        output
    }
}
