//! AdamW over a whole model, its moments kept by parameter position (module order) rather
//! than by Burn's random parameter ids.
//!
//! Burn's `ModuleOptimizer` keys each parameter's state by its `ParamId`, which is drawn
//! afresh whenever a model is built from weights, and restores saved state only onto
//! `Device::default()` (an uninitialised WebGPU device in a browser), reading it back
//! synchronously when saving (a panic on WebGPU there). Kept by position, the moments of a
//! model loaded from any weights file line up with its parameters, travel as named tensors in
//! a checkpoint ([`super::checkpoint`]), and are read back like the weights, asynchronously.

use burn::module::{Module, ModuleMapper, Param};
use burn::optim::{AdamWState, AdaptiveMomentumState, GradientsParams, Optimizer};
use burn::tensor::Tensor;

use super::OptimizerSettings;
use super::adamw::FusedAdamW;

/// One parameter's AdamW state, flattened (in Burn's layout: `[in, out]` for a linear weight).
#[derive(Clone)]
pub struct Moments {
    /// Updates this parameter has had: AdamW's bias correction counts them.
    pub time: usize,
    /// `[numel]`, the running mean of the gradient.
    pub first: Tensor<1>,
    /// `[numel]`, the running mean of its square.
    pub second: Tensor<1>,
}

/// AdamW with PyTorch's epsilon (see [`FusedAdamW`]) for a whole model.
#[derive(Clone)]
pub struct AdamW {
    update: FusedAdamW,
    /// By parameter position in module order; `None` until a parameter's first update.
    moments: Vec<Option<Moments>>,
}

impl AdamW {
    pub fn new(settings: &OptimizerSettings) -> Self {
        Self {
            update: FusedAdamW::new(settings),
            moments: Vec::new(),
        }
    }

    /// Continues from saved moments, by parameter position.
    pub fn with_moments(settings: &OptimizerSettings, moments: Vec<Option<Moments>>) -> Self {
        Self {
            update: FusedAdamW::new(settings),
            moments,
        }
    }

    /// Each parameter's state, by position; empty before the first step.
    pub fn moments(&self) -> &[Option<Moments>] {
        &self.moments
    }

    /// Updates every parameter of `module` that has a gradient in `gradients`.
    pub fn step<M: Module>(&mut self, lr: f64, module: M, mut gradients: GradientsParams) -> M {
        module.map(&mut Stepper {
            update: &self.update,
            moments: &mut self.moments,
            gradients: &mut gradients,
            lr,
            position: 0,
        })
    }
}

struct Stepper<'a> {
    update: &'a FusedAdamW,
    moments: &'a mut Vec<Option<Moments>>,
    gradients: &'a mut GradientsParams,
    lr: f64,
    position: usize,
}

impl ModuleMapper for Stepper<'_> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let position = self.position;
        self.position += 1;
        if self.moments.len() <= position {
            self.moments.resize(position + 1, None);
        }
        let (id, tensor, mapper) = param.consume();
        let Some(gradient) = self.gradients.remove::<D>(id) else {
            return Param::from_mapped_value(id, tensor, mapper);
        };
        let dims = tensor.dims();
        let numel = dims.iter().product::<usize>();
        let trains = tensor.is_require_grad();
        let state = self.moments[position].take().map(|moments| {
            AdamWState::new(AdaptiveMomentumState::new(
                moments.time,
                moments.first.reshape(dims),  // [dims]
                moments.second.reshape(dims), // [dims]
            ))
        });
        // As Burn's optimiser does: the update runs on the inner device, off the graph.
        let (updated, state) = self.update.step(self.lr, tensor.inner(), gradient, state);
        self.moments[position] = state.map(|state| Moments {
            time: state.momentum.time,
            first: state.momentum.moment_1.reshape([numel]), // [numel]
            second: state.momentum.moment_2.reshape([numel]), // [numel]
        });
        let mut updated = Tensor::from_inner(updated);
        if trains {
            updated = updated.require_grad();
        }
        Param::from_mapped_value(id, updated, mapper)
    }
}
