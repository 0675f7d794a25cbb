//! The seed's names and layout for a Burn model's parameters, both ways.

use std::collections::HashMap;

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::tensor::{Device, Tensor, TensorData};

use super::NamedTensor;
use crate::model::{Classifier, ModelConfig};

/// The seed's name for the parameter at a Burn module path.
pub fn torch_name(path: &[String]) -> String {
    path.iter()
        .map(|segment| match segment.as_str() {
            "gamma" => "weight",
            "beta" => "bias",
            "mlp_in" => "mlp.0",
            "mlp_out" => "mlp.3",
            other => other,
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The names and PyTorch shapes a model of this config has, in module order.
pub fn expected_tensors(config: &ModelConfig) -> Vec<(String, Vec<usize>)> {
    // Linear, convolution and LayerNorm parameters initialise lazily, so the model is cheap to
    // build for its shapes: only the ViT's position embedding and class token are drawn.
    let model = config.init(&Device::flex());
    let mut lister = ParamLister::default();
    model.visit(&mut lister);
    lister.entries
}

/// The module path to the parameter being visited. [`Classifier`]'s variant (`Vit`, `Cnn`)
/// is a level of Burn's path but not of the PyTorch model's names, so it is left out.
#[derive(Default)]
pub(crate) struct PathStack(Vec<Option<String>>);

impl PathStack {
    fn enter(&mut self, name: &str, container_type: &str) {
        let named = !container_type.starts_with("Enum:");
        self.0.push(named.then(|| name.to_string()));
    }
    fn exit(&mut self) {
        self.0.pop();
    }
    fn torch_name(&self) -> String {
        let path: Vec<String> = self.0.iter().flatten().cloned().collect();
        torch_name(&path)
    }
}

/// PyTorch's layout of a Burn parameter's shape: linear weights are transposed.
fn torch_shape(dims: &[usize]) -> Vec<usize> {
    match dims {
        [input, output] => vec![*output, *input],
        other => other.to_vec(),
    }
}

#[derive(Default)]
struct ParamLister {
    path: PathStack,
    entries: Vec<(String, Vec<usize>)>,
}

impl ModuleVisitor for ParamLister {
    fn enter_module(&mut self, name: &str, container_type: &str) {
        self.path.enter(name, container_type);
    }
    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.exit();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let dims = param.lazy_shape().dims::<D>();
        self.entries
            .push((self.path.torch_name(), torch_shape(&dims)));
    }
}

/// Each parameter in PyTorch layout, flattened, still on its device.
struct ParamCollector {
    path: PathStack,
    entries: Vec<(String, Vec<usize>, Tensor<1>)>,
}

impl ModuleVisitor for ParamCollector {
    fn enter_module(&mut self, name: &str, container_type: &str) {
        self.path.enter(name, container_type);
    }
    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.exit();
    }
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let mut tensor = param.val();
        if D == 2 {
            tensor = tensor.transpose();
        }
        let shape = tensor.dims().to_vec();
        let flat = tensor.reshape([shape.iter().product::<usize>()]);
        self.entries.push((self.path.torch_name(), shape, flat));
    }
}

pub(crate) fn collect(model: &Classifier) -> Vec<(String, Vec<usize>, Tensor<1>)> {
    let mut collector = ParamCollector {
        path: PathStack::default(),
        entries: Vec::new(),
    };
    model.visit(&mut collector);
    collector.entries
}

/// Replaces each parameter by the file's tensor of the same name, keeping its id and
/// whether it trains.
pub(crate) struct ParamLoader<'a> {
    pub path: PathStack,
    pub tensors: HashMap<&'a str, &'a NamedTensor>,
}

impl ModuleMapper for ParamLoader<'_> {
    fn enter_module(&mut self, name: &str, container_type: &str) {
        self.path.enter(name, container_type);
    }
    fn exit_module(&mut self, _name: &str, _container_type: &str) {
        self.path.exit();
    }
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let source = self.tensors[self.path.torch_name().as_str()];
        // Transposed here, on the host, so the parameter stays a leaf tensor.
        let data = match source.shape.as_slice() {
            &[rows, cols] => TensorData::new(transpose(&source.values, rows, cols), [cols, rows]),
            _ => TensorData::new(source.values.clone(), source.shape.clone()),
        };
        // `map` keeps the id and whether the parameter trains.
        param.map(|old| Tensor::from_data(data, &old.device()))
    }
}

/// A row-major `[rows, cols]` matrix as row-major `[cols, rows]`.
pub(crate) fn transpose(values: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0.0; values.len()];
    for row in 0..rows {
        for col in 0..cols {
            out[col * rows + row] = values[row * cols + col];
        }
    }
    out
}
