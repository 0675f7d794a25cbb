//! Inside the explaining worker: the weights it keeps, the models it builds from them per
//! backend, and the answer to each request. Whatever the GPU does here ends at most this
//! worker; the page starts a fresh one for the next request.

use std::cell::RefCell;
use std::rc::Rc;

use futures::StreamExt;
use wasm_bindgen_futures::spawn_local;

use burn::tensor::Device;

use crate::analysis::occlusion::{
    Comparison, OcclusionCurves, compare_async, occlusion_curves_async,
};
use crate::analysis::relevance::{explain_async, explaining_model};
use crate::data::{IMAGE_PIXELS, images_tensor};
use crate::model::{Classifier, VisionTransformer, VitConfig};
use crate::protocol::{FromExplainer, ToExplainer, bytes_to_images};
use crate::weights::{self, ReadbackError, WeightsError, WeightsFile};

use crate::protocol::BackendKind;
use crate::web::packet::{Packet, packets_to_this_worker};
use crate::web::start_exactly;
use crate::web::test_digits::{TestDigits, TestDigitsError};

/// Why a request could not be done here; the page hears it as [`FromExplainer::Failed`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum RequestError {
    #[error(transparent)]
    Weights(#[from] WeightsError),
    /// WebGPU did not start: why, as the device start-up says it.
    #[error("{0}")]
    NoWebGpu(String),
    #[error("no weights to explain with")]
    NoWeights,
    #[error("a CNN has no attention to explain")]
    NotAVit,
    #[error("no CNN to compare with")]
    NoCnn,
    #[error("those weights are not a CNN")]
    NotACnn,
    #[error(transparent)]
    Read(#[from] ReadbackError),
    #[error("an image is {IMAGE_PIXELS} bytes")]
    NotAnImage,
    #[error(transparent)]
    TestDigits(#[from] TestDigitsError),
}

/// What the worker holds: the weights and the models that explain and compare.
#[derive(Default)]
struct Held {
    weights: Option<Rc<WeightsFile>>,
    /// The CNN the ViT is compared with.
    cnn: Option<Rc<WeightsFile>>,
    /// Each backend's device, started on its first request and kept: a WebGPU device is
    /// not started per request.
    devices: Vec<(BackendKind, Device)>,
    /// Built on the first explanation on a backend, for the weights held.
    explainer: Option<(BackendKind, Rc<VisionTransformer>)>,
    /// The ViT and the CNN, built on the first comparison on a backend: a click on a patch
    /// runs both, it does not upload them again.
    compared: Option<(BackendKind, Rc<[Classifier; 2]>)>,
}

/// The worker's entry point: requests are handled one at a time, in the order they came.
pub fn run_explaining_worker() {
    let mut requests = packets_to_this_worker();
    spawn_local(async move {
        let model = Rc::new(RefCell::new(Held::default()));
        let digits = TestDigits::default();
        while let Some(packet) = requests.next().await {
            let Ok(request) = packet.parse::<ToExplainer>() else {
                continue;
            };
            let bytes = packet.bytes.unwrap_or_default();
            let answer = handle(request, bytes, &model, &digits).await;
            Packet::new(&answer, None).with_id(packet.id).send_to_page();
        }
    });
    let greeting = FromExplainer::Listening {
        build: crate::protocol::BUILD.to_string(),
    };
    Packet::new(&greeting, None).send_to_page();
}

async fn handle(
    request: ToExplainer,
    bytes: Vec<u8>,
    slot: &RefCell<Held>,
    digits: &TestDigits,
) -> FromExplainer {
    let failed = |error: RequestError| {
        let message = error.to_string();
        FromExplainer::Failed { message }
    };
    match request {
        ToExplainer::Keep => match weights::decode(&bytes) {
            Ok(file) => {
                let mut held = slot.borrow_mut();
                *held = Held {
                    weights: Some(Rc::new(file)),
                    devices: std::mem::take(&mut held.devices),
                    ..Held::default()
                };
                FromExplainer::Kept
            }
            Err(error) => failed(error.into()),
        },
        ToExplainer::KeepCnn => match weights::decode(&bytes) {
            Ok(file) if file.config.vit().is_none() => {
                let mut held = slot.borrow_mut();
                held.cnn = Some(Rc::new(file));
                held.compared = None;
                FromExplainer::Kept
            }
            Ok(_) => failed(RequestError::NotACnn),
            Err(error) => failed(error.into()),
        },
        ToExplainer::Compare { backend, hidden } => {
            let Some(image) = bytes_to_images(&bytes, 1).and_then(|images| images.first().copied())
            else {
                return failed(RequestError::NotAnImage);
            };
            let hidden: Vec<usize> = hidden.into_iter().map(usize::from).collect();
            match compare(slot, backend, image, &hidden).await {
                Ok(comparison) => FromExplainer::Compared { comparison },
                Err(error) => failed(error),
            }
        }
        ToExplainer::Curves { backend, images } => {
            match curves(slot, digits, backend, images as usize).await {
                Ok(curves) => FromExplainer::Curves { curves },
                Err(error) => failed(error),
            }
        }
        ToExplainer::Explain { backend, class } => {
            let Some(image) = bytes_to_images(&bytes, 1).and_then(|images| images.first().copied())
            else {
                return failed(RequestError::NotAnImage);
            };
            match explain(slot, backend, image, class).await {
                Ok(explanation) => FromExplainer::Explained { explanation },
                Err(error) => failed(error),
            }
        }
    }
}

/// The explanations of `image` with the weights held, on `backend` (the model built there on
/// the first request).
async fn explain(
    slot: &RefCell<Held>,
    backend: BackendKind,
    image: [u8; IMAGE_PIXELS],
    class: Option<u8>,
) -> Result<crate::analysis::explanation::Explanation, RequestError> {
    let file = slot
        .borrow()
        .weights
        .clone()
        .ok_or(RequestError::NoWeights)?;
    let config: VitConfig = file.config.vit().cloned().ok_or(RequestError::NotAVit)?;
    let device = device_for(slot, backend).await?;
    let model = built_for(
        slot,
        backend,
        |held| &mut held.explainer,
        || {
            Ok(Rc::new(
                explaining_model(&file, &device).ok_or(RequestError::NotAVit)?,
            ))
        },
    )?;
    let input = images_tensor(&[image], &device.autodiff());
    let class = class.map(usize::from);
    Ok(explain_async(&model, &config, input, class).await?)
}

/// What `field` of the worker's slot holds for `backend`, or `build` made and kept there in
/// place of what was built for another backend.
fn built_for<T: Clone>(
    slot: &RefCell<Held>,
    backend: BackendKind,
    field: fn(&mut Held) -> &mut Option<(BackendKind, T)>,
    build: impl FnOnce() -> Result<T, RequestError>,
) -> Result<T, RequestError> {
    let held = field(&mut slot.borrow_mut()).clone();
    if let Some((on, built)) = held
        && on == backend
    {
        return Ok(built);
    }
    let built = build()?;
    *field(&mut slot.borrow_mut()) = Some((backend, built.clone()));
    Ok(built)
}

/// The plain device for `backend`, started on the first request for it.
async fn device_for(slot: &RefCell<Held>, backend: BackendKind) -> Result<Device, RequestError> {
    let held = slot
        .borrow()
        .devices
        .iter()
        .find(|(on, _)| *on == backend)
        .cloned();
    if let Some((_, device)) = held {
        return Ok(device);
    }
    let device = match backend {
        BackendKind::Cpu => Device::flex(),
        BackendKind::WebGpu => webgpu().await?,
    };
    slot.borrow_mut().devices.push((backend, device.clone()));
    Ok(device)
}

/// The ViT's and the CNN's weights held, or why not.
fn both(slot: &RefCell<Held>) -> Result<(Rc<WeightsFile>, Rc<WeightsFile>), RequestError> {
    let held = slot.borrow();
    let vit = held.weights.clone().ok_or(RequestError::NoWeights)?;
    let cnn = held.cnn.clone().ok_or(RequestError::NoCnn)?;
    Ok((vit, cnn))
}

/// Both models' probabilities for `image` with the patches in `hidden` blanked, and the
/// ViT's with their tokens dropped.
async fn compare(
    slot: &RefCell<Held>,
    backend: BackendKind,
    image: [u8; IMAGE_PIXELS],
    hidden: &[usize],
) -> Result<Comparison, RequestError> {
    let device = device_for(slot, backend).await?;
    let models = built_for(
        slot,
        backend,
        |held| &mut held.compared,
        || {
            let (vit, cnn) = both(slot)?;
            Ok(Rc::new([vit.into_model(&device), cnn.into_model(&device)]))
        },
    )?;
    let [vit, cnn] = &*models;
    let Classifier::Vit(vit) = vit else {
        return Err(RequestError::NotAVit);
    };
    Ok(compare_async(vit, cnn, &image, hidden, &device).await?)
}

/// The occlusion curves of both models on the first `count` test digits.
async fn curves(
    slot: &RefCell<Held>,
    digits: &TestDigits,
    backend: BackendKind,
    count: usize,
) -> Result<OcclusionCurves, RequestError> {
    let (vit, cnn) = both(slot)?;
    let (images, labels) = digits.slice(0, count).await?;
    let device = device_for(slot, backend).await?;
    Ok(occlusion_curves_async(&vit, &cnn, &images, &labels, &device, 1).await?)
}

/// This worker's WebGPU device, or why there is none.
async fn webgpu() -> Result<Device, RequestError> {
    start_exactly(BackendKind::WebGpu)
        .await
        .map_err(RequestError::NoWebGpu)
}
