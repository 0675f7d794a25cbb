//! [`VitKernels`] while recording gradients: LayerNorm, attention and the bias with GELU record
//! a backward step that runs their backward kernels; the bias with the residual is never
//! called on gradients (the model composes Burn's ops there, see `mod.rs`) and records nothing.

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, NodeGuard, Ops, OpsKind};
use burn::backend::autodiff::{Autodiff, NodeId};
use burn::backend::{AutodiffBackend, tensor::FloatTensor};

use super::VitKernels;

/// The backward step of [`VitKernels::fused_layer_norm`]: input, gamma and beta.
#[derive(Debug)]
struct LayerNormBackward {
    epsilon: f32,
}

impl<B: VitKernels> Backward<B, 3> for LayerNormBackward {
    /// The input and gamma.
    type State = (NodeId, NodeId);

    fn backward(
        self,
        ops: Ops<Self::State, 3>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let [input_node, gamma_node, beta_node] = ops.parents;
        let d_output = grads.consume::<B>(&ops.node);
        let input = checkpointer.retrieve_node_output(ops.state.0);
        let gamma = checkpointer.retrieve_node_output(ops.state.1);
        let (d_input, d_gamma, d_beta) =
            B::fused_layer_norm_backward(input, gamma, d_output, self.epsilon);
        for (node, gradient) in [
            (input_node, d_input),
            (gamma_node, d_gamma),
            (beta_node, d_beta),
        ] {
            if let Some(node) = node {
                grads.register::<B>(node.id, gradient);
            }
        }
    }
}

/// The backward step of [`VitKernels::fused_attention`]: the fused QKV projection's output.
#[derive(Debug)]
struct AttentionBackward {
    heads: usize,
    scale: f32,
    keep: f32,
    seed: u32,
}

impl<B: VitKernels> Backward<B, 1> for AttentionBackward {
    /// The QKV input and the probabilities the forward pass wrote.
    type State = (NodeId, FloatTensor<B>);

    fn backward(
        self,
        ops: Ops<Self::State, 1>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let [qkv_node] = ops.parents;
        let d_mixed = grads.consume::<B>(&ops.node);
        let Some(qkv_node) = qkv_node else {
            return;
        };
        let (qkv_id, probabilities) = ops.state;
        let qkv = checkpointer.retrieve_node_output(qkv_id);
        let d_qkv = B::fused_attention_backward(
            qkv,
            probabilities,
            d_mixed,
            self.heads,
            self.scale,
            self.keep,
            self.seed,
        );
        grads.register::<B>(qkv_node.id, d_qkv);
    }
}

/// The backward step of [`VitKernels::fused_bias_gelu`]: the input and the bias.
#[derive(Debug)]
struct BiasGeluBackward;

impl<B: VitKernels> Backward<B, 2> for BiasGeluBackward {
    /// The input and the bias.
    type State = (NodeId, NodeId);

    fn backward(
        self,
        ops: Ops<Self::State, 2>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let [input_node, bias_node] = ops.parents;
        let d_output = grads.consume::<B>(&ops.node);
        let input = checkpointer.retrieve_node_output(ops.state.0);
        let bias = checkpointer.retrieve_node_output(ops.state.1);
        let (d_input, d_bias) = B::fused_bias_gelu_backward(input, bias, d_output);
        for (node, gradient) in [(input_node, d_input), (bias_node, d_bias)] {
            if let Some(node) = node {
                grads.register::<B>(node.id, gradient);
            }
        }
    }
}

/// The backward step of [`VitKernels::fused_linear`]: input, weight and (with `N = 3`) bias.
/// Each gradient is computed only for a parent that wants it (the images going into the patch
/// embedding do not).
#[derive(Debug)]
struct LinearBackward;

impl<B: VitKernels, const N: usize> Backward<B, N> for LinearBackward {
    /// The input (kept only if the weight wants its gradient) and the weight (only if the
    /// input does).
    type State = (Option<NodeId>, Option<NodeId>);

    fn backward(
        self,
        ops: Ops<Self::State, N>,
        grads: &mut Gradients,
        checkpointer: &mut Checkpointer,
    ) {
        let d_output = grads.consume::<B>(&ops.node);
        let (input, weight) = ops.state;
        let parents = &ops.parents;
        if let (Some(node), Some(weight)) = (&parents[0], weight) {
            let weight = checkpointer.retrieve_node_output(weight);
            let d_input = B::fused_linear_input_backward(weight, d_output.clone());
            grads.register::<B>(node.id, d_input);
        }
        if let (Some(node), Some(input)) = (&parents[1], input) {
            let input = checkpointer.retrieve_node_output(input);
            let d_weight = B::fused_linear_weight_backward(input, d_output.clone());
            grads.register::<B>(node.id, d_weight);
        }
        if let Some(Some(node)) = parents.get(2) {
            grads.register::<B>(node.id, B::fused_linear_bias_backward(d_output));
        }
    }
}

/// Runs `forward` on a linear layer's input and weight, recording [`LinearBackward`] for the
/// parents `nodes` (2 without a bias, 3 with): the input is kept only for the weight's gradient,
/// the weight only for the input's.
fn record_linear<B: VitKernels, C: CheckpointStrategy, const N: usize>(
    input: FloatTensor<Autodiff<B, C>>,
    weight: FloatTensor<Autodiff<B, C>>,
    nodes: [NodeGuard; N],
    forward: impl FnOnce(FloatTensor<B>, FloatTensor<B>) -> FloatTensor<B>,
) -> FloatTensor<Autodiff<B, C>> {
    let (keep_input, keep_weight) = (weight.is_tracked(), input.is_tracked());
    match LinearBackward
        .prepare::<C>(nodes)
        .compute_bound()
        .stateful()
    {
        OpsKind::Tracked(mut prep) => {
            let state = (
                keep_input.then(|| prep.checkpoint(&input)),
                keep_weight.then(|| prep.checkpoint(&weight)),
            );
            prep.finish(
                state,
                forward(input.into_primitive(), weight.into_primitive()),
            )
        }
        OpsKind::UnTracked(prep) => {
            prep.finish(forward(input.into_primitive(), weight.into_primitive()))
        }
    }
}

impl<B: VitKernels, C: CheckpointStrategy> VitKernels for Autodiff<B, C> {
    fn fused_layer_norm(
        input: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f32,
    ) -> FloatTensor<Self> {
        let prepared = LayerNormBackward { epsilon }
            .prepare::<C>([input.node(), gamma.node(), beta.node()])
            .compute_bound()
            .stateful();
        match prepared {
            OpsKind::Tracked(mut prep) => {
                let state = (prep.checkpoint(&input), prep.checkpoint(&gamma));
                let output = B::fused_layer_norm(
                    input.into_primitive(),
                    gamma.into_primitive(),
                    beta.into_primitive(),
                    epsilon,
                );
                prep.finish(state, output)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::fused_layer_norm(
                input.into_primitive(),
                gamma.into_primitive(),
                beta.into_primitive(),
                epsilon,
            )),
        }
    }

    /// The output's gradients: not differentiated again (no second-order gradients).
    fn fused_layer_norm_backward(
        input: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        d_output: FloatTensor<Self>,
        epsilon: f32,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        let (d_input, d_gamma, d_beta) = B::fused_layer_norm_backward(
            input.into_primitive(),
            gamma.into_primitive(),
            d_output.into_primitive(),
            epsilon,
        );
        (
            Self::from_inner(d_input),
            Self::from_inner(d_gamma),
            Self::from_inner(d_beta),
        )
    }

    /// The heads' outputs carry the gradient; the probabilities (the heatmaps' source) do not.
    fn fused_attention(
        qkv: FloatTensor<Self>,
        heads: usize,
        scale: f32,
        keep: f32,
        seed: u32,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let prepared = AttentionBackward {
            heads,
            scale,
            keep,
            seed,
        }
        .prepare::<C>([qkv.node()])
        .compute_bound()
        .stateful();
        match prepared {
            OpsKind::Tracked(mut prep) => {
                let qkv_state = prep.checkpoint(&qkv);
                let (mixed, probabilities) =
                    B::fused_attention(qkv.into_primitive(), heads, scale, keep, seed);
                let attention = Self::from_inner(probabilities.clone());
                (prep.finish((qkv_state, probabilities), mixed), attention)
            }
            OpsKind::UnTracked(prep) => {
                let (mixed, probabilities) =
                    B::fused_attention(qkv.into_primitive(), heads, scale, keep, seed);
                (prep.finish(mixed), Self::from_inner(probabilities))
            }
        }
    }

    /// Not differentiated again (no second-order gradients).
    fn fused_attention_backward(
        qkv: FloatTensor<Self>,
        probabilities: FloatTensor<Self>,
        d_mixed: FloatTensor<Self>,
        heads: usize,
        scale: f32,
        keep: f32,
        seed: u32,
    ) -> FloatTensor<Self> {
        Self::from_inner(B::fused_attention_backward(
            qkv.into_primitive(),
            probabilities.into_primitive(),
            d_mixed.into_primitive(),
            heads,
            scale,
            keep,
            seed,
        ))
    }

    fn fused_bias_gelu(input: FloatTensor<Self>, bias: FloatTensor<Self>) -> FloatTensor<Self> {
        let prepared = BiasGeluBackward
            .prepare::<C>([input.node(), bias.node()])
            .compute_bound()
            .stateful();
        match prepared {
            OpsKind::Tracked(mut prep) => {
                let state = (prep.checkpoint(&input), prep.checkpoint(&bias));
                let output = B::fused_bias_gelu(input.into_primitive(), bias.into_primitive());
                prep.finish(state, output)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::fused_bias_gelu(
                input.into_primitive(),
                bias.into_primitive(),
            )),
        }
    }

    /// Not differentiated again (no second-order gradients).
    fn fused_bias_gelu_backward(
        input: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        d_output: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>) {
        let (d_input, d_bias) = B::fused_bias_gelu_backward(
            input.into_primitive(),
            bias.into_primitive(),
            d_output.into_primitive(),
        );
        (Self::from_inner(d_input), Self::from_inner(d_bias))
    }

    fn fused_linear(
        input: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        let nodes = [input.node(), weight.node(), bias.node()];
        record_linear::<B, C, 3>(input, weight, nodes, |input, weight| {
            B::fused_linear(input, weight, bias.into_primitive())
        })
    }

    fn fused_product(input: FloatTensor<Self>, weight: FloatTensor<Self>) -> FloatTensor<Self> {
        let nodes = [input.node(), weight.node()];
        record_linear::<B, C, 2>(input, weight, nodes, B::fused_product)
    }

    /// Not differentiated again (no second-order gradients).
    fn fused_linear_input_backward(
        weight: FloatTensor<Self>,
        d_output: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        Self::from_inner(B::fused_linear_input_backward(
            weight.into_primitive(),
            d_output.into_primitive(),
        ))
    }

    /// Not differentiated again (no second-order gradients).
    fn fused_linear_weight_backward(
        input: FloatTensor<Self>,
        d_output: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        Self::from_inner(B::fused_linear_weight_backward(
            input.into_primitive(),
            d_output.into_primitive(),
        ))
    }

    /// Not differentiated again (no second-order gradients).
    fn fused_linear_bias_backward(d_output: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::from_inner(B::fused_linear_bias_backward(d_output.into_primitive()))
    }

    /// Recorded as a constant: the model calls it only outside training.
    fn fused_bias_residual(
        input: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        residual: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        Self::from_inner(B::fused_bias_residual(
            input.into_primitive(),
            bias.into_primitive(),
            residual.into_primitive(),
        ))
    }
}
