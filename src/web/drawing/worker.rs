//! Inside a drawing worker: the page's model on one device, the test digits it measures and
//! shows, and the answer to each request. The page's own binary runs it on the CPU (started
//! as a module worker, `drawer.js`), the `worker` binary in `role=gpu` on WebGPU: whatever
//! the model costs or the GPU does (a rejected shader, a lost device, a CubeCL panic) ends at
//! most this worker, never the page's painting.

use std::cell::RefCell;
use std::rc::Rc;

use burn::tensor::Device;
use futures::StreamExt;
use futures::future::LocalBoxFuture;
use wasm_bindgen_futures::spawn_local;

use crate::analysis::ablation::HeadImportance;
#[cfg(not(feature = "gpu"))]
use crate::analysis::ablation::{PAGE_MEAN_IMAGES, head_importance_async, head_means_async};
#[cfg(not(feature = "gpu"))]
use crate::analysis::inference::most_probable;
use crate::analysis::inference::{Classification, ModelInsight};
use crate::analysis::reading::Reading;
#[cfg(not(feature = "gpu"))]
use crate::analysis::story::{self, Story};
use crate::data::IMAGE_PIXELS;
#[cfg(not(feature = "gpu"))]
use crate::data::MAX_PERSONAL_DIGITS;
use crate::model::{Ablation, HeadMeans, HeadsOff};
#[cfg(not(feature = "gpu"))]
use crate::model::{Classifier, Replacement, VisionTransformer, VitConfig};
use crate::protocol::{FromDrawing, ToDrawing, bytes_to_images, floats_to_bytes};
#[cfg(not(feature = "gpu"))]
use crate::web::read_floats_async;
use crate::weights;

use super::client::{Answer, Port};
use crate::protocol::BackendKind;
use crate::web::asker::AskError;
use crate::web::local_model::{LocalModel, ModelError};
use crate::web::packet::{Packet, packets_to_this_worker};
use crate::web::test_digits::TestDigits;
use crate::web::{gpu_checked, start_exactly};

/// Principal components of the patch filters the analysis card shows.
pub const FILTER_COMPONENTS: usize = 8;

/// The model and the test digits a drawing worker holds, on its one device.
pub struct DrawingModel {
    backend: BackendKind,
    /// Started on the first load (WebGPU's start is asynchronous and may fail).
    device: RefCell<Option<Device>>,
    model: RefCell<Option<Rc<LocalModel>>>,
    /// The model's heads' mean outputs over the first test chunk, taken when a head is first
    /// switched off with [`Replacement::Mean`] and kept until other weights load.
    means: RefCell<Option<Rc<HeadMeans>>>,
    digits: TestDigits,
}

/// What a request met: a refusal leaves the worker trusted, a fault does not.
enum Trouble {
    Refused(String),
    Fault(String),
}

impl DrawingModel {
    pub fn new(backend: BackendKind) -> Self {
        Self {
            backend,
            device: RefCell::new(None),
            model: RefCell::new(None),
            means: RefCell::new(None),
            digits: TestDigits::default(),
        }
    }

    /// The answer to `request`, with the bytes that travel beside it.
    pub async fn answer(
        &self,
        request: ToDrawing,
        bytes: Vec<u8>,
    ) -> (FromDrawing, Option<Vec<u8>>) {
        let answered = match request {
            ToDrawing::Load => self
                .load(&bytes)
                .await
                .map(|(config, insight)| (FromDrawing::Loaded { config, insight }, None)),
            ToDrawing::Classify { off } => self
                .classify(&bytes, &off)
                .await
                .map(|packed| (FromDrawing::Classified, Some(packed))),
            ToDrawing::Story { off } => self
                .story_here(&bytes, &off)
                .await
                .map(|packed| (FromDrawing::Story, Some(packed))),
            ToDrawing::Distances { first, count } => self
                .distances(first as usize, count as usize)
                .await
                .map(|values| (FromDrawing::Distances { values }, None)),
            ToDrawing::Read { count } => {
                self.read_here(&bytes, count as usize)
                    .await
                    .map(|(digits, probabilities)| {
                        let read = FromDrawing::Read {
                            digits,
                            probabilities,
                        };
                        (read, None)
                    })
            }
            ToDrawing::Heads { images, zero } => self
                .heads_here(images as usize, zero)
                .await
                .map(|importance| (FromDrawing::Heads { importance }, None)),
            ToDrawing::Score { images } => {
                self.score_here(images as usize)
                    .await
                    .map(|(correct, images)| {
                        let scored = FromDrawing::Scored { correct, images };
                        (scored, None)
                    })
            }
            ToDrawing::TestDigit { index } => {
                match self.digits.digit(index.map(|i| i as usize)).await {
                    Ok((index, label, image)) => {
                        let index = u32::try_from(index).unwrap_or(u32::MAX);
                        Ok((FromDrawing::TestDigit { index, label }, Some(image)))
                    }
                    Err(error) => Err(Trouble::Refused(error.to_string())),
                }
            }
        };
        answered.unwrap_or_else(|trouble| match trouble {
            Trouble::Refused(message) => (FromDrawing::Refused { message }, None),
            Trouble::Fault(message) => (FromDrawing::Failed { message }, None),
        })
    }

    /// Builds and warms the model from `bytes` and reads what its weights show; the model
    /// before stays until all of that worked.
    async fn load(
        &self,
        bytes: &[u8],
    ) -> Result<(crate::model::ModelConfig, ModelInsight), Trouble> {
        let file = weights::decode(bytes).map_err(|error| Trouble::Refused(error.to_string()))?;
        let device = self.device().await?;
        let model = LocalModel::new(&file, device);
        // The first pass compiles the GPU's kernels: done before the first stroke, checked
        // (`gpu_checked`): a shader or pipeline the GPU rejects fails the load here, not in a
        // later task once WebGPU has been called good.
        let warmed = gpu_checked(model.classify_packed(&[[0; IMAGE_PIXELS]], None))
            .await
            .map_err(|rejected| Trouble::Fault(rejected.to_string()))?;
        warmed.map_err(|error| self.trouble(error))?;
        let insight = ModelInsight::from_weights(&file, FILTER_COMPONENTS);
        *self.model.borrow_mut() = Some(Rc::new(model));
        *self.means.borrow_mut() = None;
        Ok((file.config, insight))
    }

    async fn classify(&self, bytes: &[u8], off: &HeadsOff) -> Result<Vec<u8>, Trouble> {
        let model = self.model()?;
        let image = bytes_to_images(bytes, 1)
            .and_then(|images| images.first().copied())
            .ok_or_else(|| Trouble::Refused(format!("an image is {IMAGE_PIXELS} bytes")))?;
        let ablation = self.ablation(&model, off).await?;
        let packed = model
            .classify_packed(&[image], ablation.as_ref())
            .await
            .map_err(|error| self.trouble(error))?;
        let classification = Classification::from_packed(&packed, &model.config);
        Ok(floats_to_bytes(
            &Reading::of(&classification, &model.config).to_packed(),
        ))
    }

    async fn distances(&self, first: usize, count: usize) -> Result<Vec<Vec<f32>>, Trouble> {
        let model = self.model()?;
        let (images, _) = self
            .digits
            .slice(first, count)
            .await
            .map_err(|error| Trouble::Refused(error.to_string()))?;
        if images.is_empty() {
            return Err(Trouble::Refused(format!(
                "no test digits from the {first}th"
            )));
        }
        model
            .attention_distance(&images)
            .await
            .map_err(|error| self.trouble(error))
    }

    /// [`Self::read`] where this worker reads sets: on the CPU, in the page's own binary. The
    /// GPU's worker (the `worker` binary, held to 3 MB) leaves that to the CPU's.
    async fn read_here(&self, bytes: &[u8], count: usize) -> Result<(Vec<u8>, Vec<f32>), Trouble> {
        #[cfg(feature = "gpu")]
        {
            let _ = (bytes, count);
            Err(Trouble::Refused("a set is read on the CPU".into()))
        }
        #[cfg(not(feature = "gpu"))]
        self.read(bytes, count).await
    }

    /// Which heads matter, where this worker measures it: on the CPU, in the page's own binary
    /// (a worker started for it, never the one the lab draws with).
    async fn heads_here(&self, images: usize, zero: bool) -> Result<HeadImportance, Trouble> {
        #[cfg(feature = "gpu")]
        {
            let _ = (images, zero);
            Err(Trouble::Refused(
                "which heads matter is measured on the CPU".into(),
            ))
        }
        #[cfg(not(feature = "gpu"))]
        self.heads(images, zero).await
    }

    /// [`Self::story`] where this worker tells it: on the CPU, in the page's own binary (the
    /// GPU's worker, held to 3 MB, leaves it to the CPU's).
    async fn story_here(&self, bytes: &[u8], off: &HeadsOff) -> Result<Vec<u8>, Trouble> {
        #[cfg(feature = "gpu")]
        {
            let _ = (bytes, off);
            Err(Trouble::Refused("the story is told on the CPU".into()))
        }
        #[cfg(not(feature = "gpu"))]
        self.story(bytes, off).await
    }

    /// The image's path through the ViT, packed for the page.
    #[cfg(not(feature = "gpu"))]
    async fn story(&self, bytes: &[u8], off: &HeadsOff) -> Result<Vec<u8>, Trouble> {
        let model = self.model()?;
        let (Classifier::Vit(vit), Some(config)) = (&model.model, model.config.vit()) else {
            return Err(Trouble::Refused("a CNN has no tokens to follow".into()));
        };
        let image = bytes_to_images(bytes, 1)
            .and_then(|images| images.first().copied())
            .ok_or_else(|| Trouble::Refused(format!("an image is {IMAGE_PIXELS} bytes")))?;
        let ablation = self.ablation(&model, off).await?;
        let pending = story::story(vit, &image, ablation.as_ref(), &model.device);
        let read = read_floats_async(pending.read, "the story")
            .await
            .map_err(|error| self.trouble(error.into()))?;
        let told = Story::of_read(&read, config)
            .ok_or_else(|| Trouble::Refused("the story's values did not fit the model".into()))?;
        if told.logits.iter().any(|l| !l.is_finite()) {
            return Err(self.trouble(ModelError::NotFinite));
        }
        Ok(floats_to_bytes(&told.to_packed()))
    }

    /// [`Self::score`] where this worker scores: on the CPU, in the page's own binary.
    async fn score_here(&self, count: usize) -> Result<(u32, u32), Trouble> {
        #[cfg(feature = "gpu")]
        {
            let _ = count;
            Err(Trouble::Refused("test digits are scored on the CPU".into()))
        }
        #[cfg(not(feature = "gpu"))]
        self.score(count).await
    }

    /// How many of the first `count` test digits the model reads right, of how many.
    #[cfg(not(feature = "gpu"))]
    async fn score(&self, count: usize) -> Result<(u32, u32), Trouble> {
        let (images, labels) = self
            .digits
            .slice(0, count)
            .await
            .map_err(|error| Trouble::Refused(error.to_string()))?;
        let (digits, _) = self.read_images(&images).await?;
        let correct = digits.iter().zip(&labels).filter(|(d, l)| d == l).count();
        // At most a test chunk's digits.
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Ok((count(correct), count(labels.len())))
    }

    /// The accuracy each head's absence costs on the first `count` test digits.
    #[cfg(not(feature = "gpu"))]
    async fn heads(&self, count: usize, zero: bool) -> Result<HeadImportance, Trouble> {
        let model = self.model()?;
        let (Classifier::Vit(vit), Some(config)) = (&model.model, model.config.vit()) else {
            return Err(Trouble::Refused("a CNN has no heads".into()));
        };
        let (replacement, means) = match zero {
            true => (Replacement::Zero, None),
            false => (
                Replacement::Mean,
                Some(self.means(vit, config, &model.device).await?),
            ),
        };
        let (images, labels) = self
            .digits
            .slice(0, count)
            .await
            .map_err(|error| Trouble::Refused(error.to_string()))?;
        let measured = (&images[..], &labels[..]);
        let device = &model.device;
        head_importance_async(vit, config, measured, replacement, means.as_deref(), device)
            .await
            .map_err(|error| Trouble::Refused(error.to_string()))
    }

    /// The digit read in each of `count` images, and its probability.
    #[cfg(not(feature = "gpu"))]
    async fn read(&self, bytes: &[u8], count: usize) -> Result<(Vec<u8>, Vec<f32>), Trouble> {
        let images = bytes_to_images(bytes, count)
            .filter(|_| count <= MAX_PERSONAL_DIGITS)
            .ok_or_else(|| {
                Trouble::Refused(format!(
                    "{} bytes are not {count} images of {IMAGE_PIXELS} bytes (at most {MAX_PERSONAL_DIGITS})",
                    bytes.len()
                ))
            })?;
        self.read_images(&images).await
    }

    /// The digit the model reads in each of `images`, and its probability.
    #[cfg(not(feature = "gpu"))]
    async fn read_images(
        &self,
        images: &[[u8; IMAGE_PIXELS]],
    ) -> Result<(Vec<u8>, Vec<f32>), Trouble> {
        let model = self.model()?;
        let probabilities = model
            .probabilities(images)
            .await
            .map_err(|error| self.trouble(error))?;
        let classes = model.config.num_classes().max(1);
        Ok(probabilities
            .chunks(classes)
            .map(|row| {
                let digit = most_probable(row);
                (digit as u8, row[digit])
            })
            .unzip())
    }

    /// The heads `off` names switched off in `model`: on the CPU (the page's own binary); the
    /// GPU's worker (held to 3 MB) leaves heads switched off to the CPU's.
    #[cfg(feature = "gpu")]
    async fn ablation(
        &self,
        _model: &LocalModel,
        off: &HeadsOff,
    ) -> Result<Option<Ablation>, Trouble> {
        match off.is_empty() {
            true => Ok(None),
            false => Err(Trouble::Refused("heads are switched off on the CPU".into())),
        }
    }

    /// The heads `off` names switched off in `model` (none for a CNN or no heads).
    #[cfg(not(feature = "gpu"))]
    async fn ablation(
        &self,
        model: &LocalModel,
        off: &HeadsOff,
    ) -> Result<Option<Ablation>, Trouble> {
        let (Classifier::Vit(vit), Some(config)) = (&model.model, model.config.vit()) else {
            return Ok(None);
        };
        if off.is_empty() {
            return Ok(None);
        }
        // Checked before any mean is taken.
        if !off.fits(config) {
            let heads = (config.depth, config.heads);
            return Err(Trouble::Refused(format!(
                "heads {} are not all in a model of {} layers of {} heads",
                off.to_param(),
                heads.0,
                heads.1
            )));
        }
        let means = match off.replacement {
            Replacement::Zero => None,
            Replacement::Mean => Some(self.means(vit, config, &model.device).await?),
        };
        Ablation::of(config, off, means.as_deref(), &model.device)
            .map(Some)
            .map_err(|error| Trouble::Refused(error.to_string()))
    }

    /// The heads' mean outputs over the first test chunk, taken on first use.
    #[cfg(not(feature = "gpu"))]
    async fn means(
        &self,
        vit: &VisionTransformer,
        config: &VitConfig,
        device: &Device,
    ) -> Result<Rc<HeadMeans>, Trouble> {
        if let Some(means) = self.means.borrow().clone() {
            return Ok(means);
        }
        let (images, _) = self
            .digits
            .slice(0, PAGE_MEAN_IMAGES)
            .await
            .map_err(|error| Trouble::Refused(error.to_string()))?;
        let means = head_means_async(vit, config, &images, device)
            .await
            .map(Rc::new)
            .map_err(|error| match self.backend {
                BackendKind::Cpu => Trouble::Refused(error.to_string()),
                BackendKind::WebGpu => Trouble::Fault(error.to_string()),
            })?;
        *self.means.borrow_mut() = Some(means.clone());
        Ok(means)
    }

    fn model(&self) -> Result<Rc<LocalModel>, Trouble> {
        self.model
            .borrow()
            .clone()
            .ok_or_else(|| Trouble::Refused("no model is loaded".into()))
    }

    /// This worker's device, started on first use.
    async fn device(&self) -> Result<Device, Trouble> {
        if let Some(device) = self.device.borrow().clone() {
            return Ok(device);
        }
        let device = start_exactly(self.backend).await.map_err(Trouble::Fault)?;
        *self.device.borrow_mut() = Some(device.clone());
        Ok(device)
    }

    /// A model's error as this worker's trouble: anything the GPU gives is a fault (a GPU that
    /// failed once is not trusted again); on the CPU only a failed read is, as NaN
    /// probabilities come from the weights.
    fn trouble(&self, error: ModelError) -> Trouble {
        match (self.backend, &error) {
            (BackendKind::Cpu, ModelError::NotFinite | ModelError::NoAttention) => {
                Trouble::Refused(error.to_string())
            }
            _ => Trouble::Fault(error.to_string()),
        }
    }
}

/// The worker's entry point: requests are answered one at a time, in the order they came,
/// with the model on `backend`.
pub fn run_drawing_worker(backend: BackendKind) {
    let mut requests = packets_to_this_worker();
    spawn_local(async move {
        let model = DrawingModel::new(backend);
        while let Some(packet) = requests.next().await {
            let Ok(request) = packet.parse::<ToDrawing>() else {
                continue;
            };
            let (answer, bytes) = model
                .answer(request, packet.bytes.unwrap_or_default())
                .await;
            Packet::new(&answer, bytes)
                .with_id(packet.id)
                .send_to_page();
        }
    });
    let greeting = FromDrawing::Listening {
        build: crate::protocol::BUILD.to_string(),
    };
    Packet::new(&greeting, None).send_to_page();
}

/// The model in the page's own thread, answering as a worker would: for the browser tests,
/// which have no worker script to start.
pub struct InThread {
    model: DrawingModel,
}

impl InThread {
    pub fn new(backend: BackendKind) -> Self {
        Self {
            model: DrawingModel::new(backend),
        }
    }
}

impl Port for InThread {
    fn request(
        &self,
        request: ToDrawing,
        bytes: Vec<u8>,
        _deadline_ms: u32,
    ) -> LocalBoxFuture<'_, Answer> {
        Box::pin(async move {
            let (answer, bytes) = self.model.answer(request, bytes).await;
            match answer {
                FromDrawing::Failed { message, .. } => Err(AskError::Failed(message)),
                answer => Ok((answer, bytes)),
            }
        })
    }

    fn failure(&self) -> Option<AskError> {
        None
    }
}
