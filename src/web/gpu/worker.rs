//! The GPU worker: the page's model on WebGPU, in a worker of its own. Whatever the GPU does
//! (rejects a shader, loses the device, makes CubeCL panic) ends at most this worker; the page
//! hears of it and carries on on the CPU.

use std::cell::RefCell;
use std::rc::Rc;

use futures::StreamExt;
use wasm_bindgen_futures::spawn_local;

use burn::tensor::Device;

use crate::analysis::explanation::probabilities;
use crate::analysis::occlusion::{
    Comparison, OcclusionCurves, kept_patches, occlude, occlusion_curves_async,
};
use crate::analysis::relevance::{explain_async, explaining_model};
use crate::data::{IMAGE_PIXELS, IMAGE_SIDE, images_tensor};
use crate::model::{Classifier, VisionTransformer, VitConfig};
use crate::protocol::{FromGpu, ToGpu, bytes_to_images, floats_to_bytes};
use crate::weights::{self, ReadError, WeightsError, WeightsFile, read_all_async};

use crate::web::local_model::{LocalModel, ModelError};
use crate::web::packet::{Packet, packets_to_this_worker};
use crate::web::{BackendKind, start_device};

/// Why a request could not be done here; the page hears it as [`FromGpu::Failed`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum RequestError {
    #[error(transparent)]
    Weights(#[from] WeightsError),
    /// WebGPU did not start: why, as the device start-up says it.
    #[error("{0}")]
    NoWebGpu(String),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("no model is loaded on the GPU")]
    NoModel,
    #[error("no weights to explain with")]
    NoWeights,
    #[error("a CNN has no attention to explain")]
    NotAVit,
    #[error("no CNN to compare with")]
    NoCnn,
    #[error("those weights are not a CNN")]
    NotACnn,
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("an image is {IMAGE_PIXELS} bytes")]
    NotAnImage,
    #[error("{images} images are not {bytes} bytes")]
    NotImages { images: usize, bytes: usize },
}

/// What the worker holds: the model that classifies, and the weights and models that explain
/// and compare.
#[derive(Default)]
struct Held {
    model: Option<Rc<LocalModel>>,
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
pub fn run_gpu_worker() {
    let mut requests = packets_to_this_worker();
    spawn_local(async move {
        let model = Rc::new(RefCell::new(Held::default()));
        while let Some(packet) = requests.next().await {
            let Ok(request) = packet.parse::<ToGpu>() else {
                continue;
            };
            let (answer, bytes) = handle(request, packet.bytes.unwrap_or_default(), &model).await;
            Packet::new(&answer, bytes).send_to_page();
        }
    });
    Packet::new(&FromGpu::Ready, None).send_to_page();
}

async fn handle(
    request: ToGpu,
    bytes: Vec<u8>,
    slot: &RefCell<Held>,
) -> (FromGpu, Option<Vec<u8>>) {
    let failed = |id, error: RequestError| {
        let message = error.to_string();
        (FromGpu::Failed { id, message }, None)
    };
    match request {
        ToGpu::Load { id } => match load(&bytes).await {
            Ok(model) => {
                slot.borrow_mut().model = Some(Rc::new(model));
                (FromGpu::Loaded { id }, None)
            }
            Err(error) => failed(id, error),
        },
        ToGpu::Keep { id } => match weights::decode(&bytes) {
            Ok(file) => {
                let mut held = slot.borrow_mut();
                *held = Held {
                    weights: Some(Rc::new(file)),
                    devices: std::mem::take(&mut held.devices),
                    ..Held::default()
                };
                (FromGpu::Loaded { id }, None)
            }
            Err(error) => failed(id, error.into()),
        },
        ToGpu::KeepCnn { id } => match weights::decode(&bytes) {
            Ok(file) if file.config.vit().is_none() => {
                let mut held = slot.borrow_mut();
                held.cnn = Some(Rc::new(file));
                held.compared = None;
                (FromGpu::Loaded { id }, None)
            }
            Ok(_) => failed(id, RequestError::NotACnn),
            Err(error) => failed(id, error.into()),
        },
        ToGpu::Compare {
            id,
            backend,
            hidden,
        } => {
            let Some(image) = bytes_to_images(&bytes, 1).and_then(|images| images.first().copied())
            else {
                return failed(id, RequestError::NotAnImage);
            };
            let hidden: Vec<usize> = hidden.into_iter().map(usize::from).collect();
            match compare(slot, backend, image, &hidden).await {
                Ok(comparison) => (FromGpu::Compared { id, comparison }, None),
                Err(error) => failed(id, error),
            }
        }
        ToGpu::Curves {
            id,
            backend,
            images,
        } => {
            let pixels = images.saturating_mul(IMAGE_PIXELS);
            let (Some(list), Some(labels)) = (
                bytes.get(..pixels).and_then(|b| bytes_to_images(b, images)),
                bytes.get(pixels..).filter(|labels| labels.len() == images),
            ) else {
                let bytes = bytes.len();
                return failed(id, RequestError::NotImages { images, bytes });
            };
            match curves(slot, backend, &list, labels).await {
                Ok(curves) => (FromGpu::Curves { id, curves }, None),
                Err(error) => failed(id, error),
            }
        }
        ToGpu::Explain { id, backend, class } => {
            let Some(image) = bytes_to_images(&bytes, 1).and_then(|images| images.first().copied())
            else {
                return failed(id, RequestError::NotAnImage);
            };
            match explain(slot, backend, image, class).await {
                Ok(explanation) => (FromGpu::Explained { id, explanation }, None),
                Err(error) => failed(id, error),
            }
        }
        ToGpu::Classify { id } => {
            let Some(model) = slot.borrow().model.clone() else {
                return failed(id, RequestError::NoModel);
            };
            let Some(image) = bytes_to_images(&bytes, 1).and_then(|images| images.first().copied())
            else {
                return failed(id, RequestError::NotAnImage);
            };
            match model.classify_packed(&[image]).await {
                Ok(packed) => (FromGpu::Classified { id }, Some(floats_to_bytes(&packed))),
                Err(error) => failed(id, error.into()),
            }
        }
        ToGpu::Distances { id, images } => {
            let Some(model) = slot.borrow().model.clone() else {
                return failed(id, RequestError::NoModel);
            };
            let Some(images) = bytes_to_images(&bytes, images) else {
                let bytes = bytes.len();
                return failed(id, RequestError::NotImages { images, bytes });
            };
            match model.attention_distance(&images).await {
                Ok(values) => (FromGpu::Distances { id, values }, None),
                Err(error) => failed(id, error.into()),
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
    let Classifier::Vit(dropping) = vit else {
        return Err(RequestError::NotAVit);
    };
    let grid = IMAGE_SIDE / dropping.patch_embed.patch_size.max(1);
    let blanked = images_tensor(&[occlude(&image, grid, hidden)], &device); // [1, 1, 28, 28]
    let kept = [kept_patches(grid * grid, hidden)];
    let logits = vec![
        vit.forward(blanked.clone()).flatten::<1>(0, 1),
        dropping
            .forward_kept(images_tensor(&[image], &device), &kept)
            .flatten::<1>(0, 1),
        cnn.forward(blanked).flatten::<1>(0, 1),
    ];
    let mut read = read_all_async(logits).await?.into_iter();
    let mut next = || probabilities(&read.next().unwrap_or_default());
    Ok(Comparison {
        vit: next(),
        vit_dropped: next(),
        cnn: next(),
    })
}

/// The occlusion curves of both models on `images`.
async fn curves(
    slot: &RefCell<Held>,
    backend: BackendKind,
    images: &[[u8; IMAGE_PIXELS]],
    labels: &[u8],
) -> Result<OcclusionCurves, RequestError> {
    let (vit, cnn) = both(slot)?;
    let device = device_for(slot, backend).await?;
    Ok(occlusion_curves_async(&vit, &cnn, images, labels, &device, 1).await?)
}

/// This worker's WebGPU device, or why there is none.
async fn webgpu() -> Result<Device, RequestError> {
    let started = start_device(Some(BackendKind::WebGpu)).await;
    if started.backend != BackendKind::WebGpu {
        return Err(RequestError::NoWebGpu(
            started
                .fallback_reason
                .unwrap_or_else(|| "WebGPU did not start".into()),
        ));
    }
    Ok(started.device)
}

/// The weights on WebGPU, run once so that every kernel is compiled before the first drawing.
async fn load(bytes: &[u8]) -> Result<LocalModel, RequestError> {
    let file = weights::decode(bytes)?;
    let model = LocalModel::new(&file, webgpu().await?);
    model.classify_packed(&[[0; IMAGE_PIXELS]]).await?;
    Ok(model)
}
