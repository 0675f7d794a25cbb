//! AdamW with PyTorch's epsilon, whose update of a parameter on a GPU is one kernel
//! (`adamw_kernel.rs`) and on the CPU Burn's own `AdamW`. Both keep Burn's `AdamWState`, so a
//! checkpoint's optimiser state reads back whichever device wrote it.

use burn::optim::{AdamW, AdamWConfig, AdamWState, LearningRate, ModuleOptimizer, Optimizer};
use burn::tensor::{Device, Tensor};

use super::OptimizerSettings;

const BETA_1: f32 = 0.9;
const BETA_2: f32 = 0.999;
/// PyTorch's default; Burn's is 1e-5.
const EPSILON: f32 = 1e-8;

/// AdamW without AMSGrad or cautious decay, as the seed's `torch.optim.Adam(W)`.
#[derive(Clone)]
pub struct FusedAdamW {
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    weight_decay: f32,
    /// The same optimiser in Burn's ops, for the CPU (where each op is already one pass).
    burn: AdamW,
}

impl FusedAdamW {
    pub fn new(settings: &OptimizerSettings) -> Self {
        let burn = AdamWConfig::new()
            .with_beta_1(BETA_1)
            .with_beta_2(BETA_2)
            .with_epsilon(EPSILON)
            .with_weight_decay(settings.weight_decay)
            .build();
        Self {
            weight_decay: settings.weight_decay,
            burn,
        }
    }

    /// As a [`ModuleOptimizer`], which steps a whole model.
    pub fn init(settings: &OptimizerSettings) -> ModuleOptimizer {
        ModuleOptimizer::from(Self::new(settings))
    }
}

impl Optimizer for FusedAdamW {
    type State<const D: usize> = AdamWState<D>;

    fn step<const D: usize>(
        &self,
        lr: LearningRate,
        tensor: Tensor<D>,
        grad: Tensor<D>,
        state: Option<Self::State<D>>,
    ) -> (Tensor<D>, Option<Self::State<D>>) {
        #[cfg(feature = "gpu")]
        if tensor.device().inner() != Device::flex() {
            return self.fused_step(lr, tensor, grad, state);
        }
        self.burn.step(lr, tensor, grad, state)
    }

    fn to_device<const D: usize>(state: Self::State<D>, device: &Device) -> Self::State<D> {
        AdamW::to_device(state, device)
    }
}

#[cfg(feature = "gpu")]
impl FusedAdamW {
    /// Burn's `AdamW::step` in one kernel: the same coefficients, computed the same way.
    fn fused_step<const D: usize>(
        &self,
        lr: LearningRate,
        tensor: Tensor<D>,
        grad: Tensor<D>,
        state: Option<AdamWState<D>>,
    ) -> (Tensor<D>, Option<AdamWState<D>>) {
        use super::adamw_kernel::{AdamWCoefficients, adamw};
        use burn::optim::AdaptiveMomentumState;

        let (time, moment_1, moment_2, first) = match state {
            Some(state) => {
                let momentum = state.momentum;
                (
                    momentum.time + 1,
                    momentum.moment_1,
                    momentum.moment_2,
                    false,
                )
            }
            None => (1, grad.clone(), grad.clone(), true),
        };
        let power = i32::try_from(time).unwrap_or(i32::MAX);
        let coefficients = AdamWCoefficients {
            keep_1: if first { 0.0 } else { BETA_1 },
            blend_1: 1.0 - BETA_1,
            keep_2: if first { 0.0 } else { BETA_2 },
            blend_2: 1.0 - BETA_2,
            correction_1: 1.0 - BETA_1.powi(power),
            correction_2: 1.0 - BETA_2.powi(power),
            epsilon: EPSILON,
            learning_rate: lr as f32,
            decay: (1.0 - lr * f64::from(self.weight_decay)) as f32,
        };
        let (tensor, moment_1, moment_2) = adamw(tensor, grad, moment_1, moment_2, coefficients);
        let momentum = AdaptiveMomentumState::new(time, moment_1, moment_2);
        (tensor, Some(AdamWState::new(momentum)))
    }
}
