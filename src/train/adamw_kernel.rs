//! AdamW's update of one parameter tensor as one GPU kernel. Burn's `AdamW` spends about a
//! dozen element-wise ops on each parameter (the two moments, their bias corrections, the
//! square root, the decay, the step); without Burn's kernel fusion each is a dispatch, and
//! the seed preset's 74 parameter tensors made the optimiser most of a training step's
//! dispatches (`vit bench --device gpu`: 1,527 per step, of them ~1,000 the optimiser's).

use burn::backend::autodiff::Autodiff;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::cubecl::dtype_to_storage_type;
use burn::backend::{AutodiffBackend, Backend, Dispatch, backend_extension, tensor::FloatTensor};
use burn::tensor::Tensor;
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::ops::numeric::empty_device_dtype;
use burn_cubecl::tensor::CubeTensor;
use burn_cubecl::{CubeBackend, cubecl};
use cubecl::{CubeDim, calculate_cube_count_elemwise};

/// What one AdamW step needs besides the tensors, computed once on the host as Burn's
/// `AdamW` computes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamWCoefficients {
    /// Weight of the old first moment: β₁, or 0 on the first step (no moment yet).
    pub keep_1: f32,
    /// Weight of the gradient in the first moment: 1 - β₁.
    pub blend_1: f32,
    /// Weight of the old second moment: β₂, or 0 on the first step.
    pub keep_2: f32,
    /// Weight of the squared gradient in the second moment: 1 - β₂.
    pub blend_2: f32,
    /// Bias corrections: 1 - β₁ᵗ and 1 - β₂ᵗ.
    pub correction_1: f32,
    pub correction_2: f32,
    pub epsilon: f32,
    pub learning_rate: f32,
    /// The decoupled weight decay's factor: 1 - learning rate · weight decay.
    pub decay: f32,
}

#[backend_extension(Cube, Autodiff, Fusion: cfg(feature = "fusion"))]
pub trait AdamWKernel: Backend {
    #[fusion(meta = three_like_parameter)]
    #[allow(clippy::too_many_arguments)]
    fn fused_adamw(
        parameter: FloatTensor<Self>,
        gradient: FloatTensor<Self>,
        moment_1: FloatTensor<Self>,
        moment_2: FloatTensor<Self>,
        coefficients: AdamWCoefficients,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>);
}

/// The shapes [`AdamWKernel::fused_adamw`] returns: the parameter's, three times.
#[cfg(feature = "fusion")]
fn three_like_parameter(
    parameter: &burn::backend::fusion::custom::TensorSpec,
    _gradient: &burn::backend::fusion::custom::TensorSpec,
    _moment_1: &burn::backend::fusion::custom::TensorSpec,
    _moment_2: &burn::backend::fusion::custom::TensorSpec,
    _coefficients: &AdamWCoefficients,
) -> (
    burn::backend::fusion::custom::TensorSpec,
    burn::backend::fusion::custom::TensorSpec,
    burn::backend::fusion::custom::TensorSpec,
) {
    (parameter.clone(), parameter.clone(), parameter.clone())
}

/// The updated parameter and moments: `(parameter, moment_1, moment_2)`. On the first step
/// pass the gradient as both moments with `keep_1 = keep_2 = 0`.
///
/// # Shapes
/// - every tensor: the parameter's
pub fn adamw<const D: usize>(
    parameter: Tensor<D>,
    gradient: Tensor<D>,
    moment_1: Tensor<D>,
    moment_2: Tensor<D>,
    coefficients: AdamWCoefficients,
) -> (Tensor<D>, Tensor<D>, Tensor<D>) {
    let (parameter, moment_1, moment_2) = Dispatch::fused_adamw(
        parameter.into_dispatch(),
        gradient.into_dispatch(),
        moment_1.into_dispatch(),
        moment_2.into_dispatch(),
        coefficients,
    );
    (
        Tensor::from_dispatch(parameter),
        Tensor::from_dispatch(moment_1),
        Tensor::from_dispatch(moment_2),
    )
}

/// The kernel, beside Burn's `Tensor` it would shadow.
mod kernel {
    use burn_cubecl::cubecl;
    use cubecl::prelude::*;

    /// One unit per element, in the order of Burn's ops so the results agree to the last bit
    /// where the GPU rounds as the CPU does.
    ///
    /// # Shapes
    /// - every tensor: `[n]` (any shape, contiguous)
    #[cube(launch)]
    #[allow(clippy::too_many_arguments)]
    pub fn adamw_step<F: Float>(
        parameter: &Tensor<F>,
        gradient: &Tensor<F>,
        moment_1: &Tensor<F>,
        moment_2: &Tensor<F>,
        new_parameter: &mut Tensor<F>,
        new_moment_1: &mut Tensor<F>,
        new_moment_2: &mut Tensor<F>,
        keep_1: f32,
        blend_1: f32,
        keep_2: f32,
        blend_2: f32,
        correction_1: f32,
        correction_2: f32,
        epsilon: f32,
        learning_rate: f32,
        decay: f32,
        #[define(F)] _dtype: ElemType,
    ) {
        let index = ABSOLUTE_POS;
        if index >= parameter.len() {
            terminate!();
        }
        let g = gradient[index];
        let m = moment_1[index] * F::cast_from(keep_1) + g * F::cast_from(blend_1);
        let v = moment_2[index] * F::cast_from(keep_2) + g * g * F::cast_from(blend_2);
        new_moment_1[index] = m;
        new_moment_2[index] = v;
        let step = (m / F::cast_from(correction_1))
            / ((v / F::cast_from(correction_2)).sqrt() + F::cast_from(epsilon));
        new_parameter[index] =
            parameter[index] * F::cast_from(decay) - step * F::cast_from(learning_rate);
    }
}

impl AdamWKernel for CubeBackend {
    fn fused_adamw(
        parameter: CubeTensor,
        gradient: CubeTensor,
        moment_1: CubeTensor,
        moment_2: CubeTensor,
        coefficients: AdamWCoefficients,
    ) -> (CubeTensor, CubeTensor, CubeTensor) {
        let [parameter, gradient, moment_1, moment_2] =
            [parameter, gradient, moment_1, moment_2].map(into_contiguous);
        let shape = parameter.meta.shape().clone();
        let empty = || {
            empty_device_dtype(
                parameter.client.clone(),
                parameter.device.clone(),
                shape.clone(),
                parameter.dtype,
            )
        };
        let (new_parameter, new_moment_1, new_moment_2) = (empty(), empty(), empty());
        let units = shape.num_elements();
        let cube_dim = CubeDim::new(&parameter.client, units);
        let cubes = calculate_cube_count_elemwise(&parameter.client, units, cube_dim);
        let dtype = dtype_to_storage_type(parameter.dtype);
        let c = coefficients;
        kernel::adamw_step::launch(
            &parameter.client.clone(),
            cubes,
            cube_dim,
            parameter.into_tensor_arg(),
            gradient.into_tensor_arg(),
            moment_1.into_tensor_arg(),
            moment_2.into_tensor_arg(),
            new_parameter.clone().into_tensor_arg(),
            new_moment_1.clone().into_tensor_arg(),
            new_moment_2.clone().into_tensor_arg(),
            c.keep_1,
            c.blend_1,
            c.keep_2,
            c.blend_2,
            c.correction_1,
            c.correction_2,
            c.epsilon,
            c.learning_rate,
            c.decay,
            dtype,
        );
        (new_parameter, new_moment_1, new_moment_2)
    }
}

/// The optimiser works on the parameters' inner tensors, outside the graph: nothing to record.
impl<B: AdamWKernel, C: CheckpointStrategy> AdamWKernel for Autodiff<B, C> {
    fn fused_adamw(
        parameter: FloatTensor<Self>,
        gradient: FloatTensor<Self>,
        moment_1: FloatTensor<Self>,
        moment_2: FloatTensor<Self>,
        coefficients: AdamWCoefficients,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        let (parameter, moment_1, moment_2) = B::fused_adamw(
            parameter.into_primitive(),
            gradient.into_primitive(),
            moment_1.into_primitive(),
            moment_2.into_primitive(),
            coefficients,
        );
        (
            Self::from_inner(parameter),
            Self::from_inner(moment_1),
            Self::from_inner(moment_2),
        )
    }
}
