//! The model the page draws with, as the page sees it: its config and what its weights show,
//! and the drawing worker that runs it (on the CPU or on WebGPU). The page's own thread never
//! holds a tensor.

use std::rc::Rc;

use crate::analysis::inference::ModelInsight;
use crate::analysis::reading::Reading;
use crate::analysis::story::Story;
use crate::data::IMAGE_PIXELS;
use crate::model::{HeadsOff, ModelConfig};

use super::drawing::{DrawingError, DrawingWorker, TestDigit};
use crate::protocol::BackendKind;

/// A model ready to classify drawings, in its worker.
pub struct Engine {
    pub backend: BackendKind,
    pub config: ModelConfig,
    /// What the weights alone show (Fig. 7 for a ViT; filters and receptive fields for a CNN).
    pub insight: ModelInsight,
    worker: Rc<DrawingWorker>,
}

impl Engine {
    /// Has `worker` build and warm the model from `bytes` (checked there: weights that are not
    /// a model are refused, and the worker keeps the model it had).
    pub async fn load(
        bytes: &[u8],
        worker: Rc<DrawingWorker>,
        backend: BackendKind,
    ) -> Result<Self, DrawingError> {
        let (config, insight) = worker.load(bytes).await?;
        Ok(Self {
            backend,
            config,
            insight,
            worker,
        })
    }

    /// What the page shows of one 28×28 image, with the heads `off` names switched off:
    /// probabilities and maps from one forward pass, read in the worker.
    pub async fn classify(
        &self,
        image: &[u8; IMAGE_PIXELS],
        off: HeadsOff,
    ) -> Result<Reading, DrawingError> {
        let packed = self.worker.classify(image, off).await?;
        Reading::from_packed(&packed, &self.config).ok_or(DrawingError::WrongLength {
            found: packed.len(),
            expected: Reading::packed_len(&self.config),
        })
    }

    /// The image's path through the model, with the heads `off` names switched off (a
    /// ViT's; the worker refuses a CNN's). Ask the CPU's engine: only it tells stories.
    pub async fn story(
        &self,
        image: &[u8; IMAGE_PIXELS],
        off: HeadsOff,
    ) -> Result<Story, DrawingError> {
        let packed = self.worker.story(image, off).await?;
        let Some(config) = self.config.vit() else {
            return Err(DrawingError::Refused(
                "a CNN has no tokens to follow".into(),
            ));
        };
        Story::from_packed(&packed, config).ok_or(DrawingError::WrongLength {
            found: packed.len(),
            expected: Story::packed_len(config),
        })
    }

    /// Mean attention distance per layer and head over `count` test digits from the
    /// `first`th (a ViT's).
    pub async fn attention_distance(
        &self,
        first: u32,
        count: u32,
    ) -> Result<Vec<Vec<f32>>, DrawingError> {
        self.worker.distances(first, count).await
    }

    /// What the model reads in each of `images`: the digit and its probability.
    pub async fn read(
        &self,
        images: &[[u8; IMAGE_PIXELS]],
    ) -> Result<Vec<(u8, f32)>, DrawingError> {
        self.worker.read(images).await
    }

    /// Test digit `index`, or one at random.
    pub async fn test_digit(&self, index: Option<u32>) -> Result<TestDigit, DrawingError> {
        self.worker.test_digit(index).await
    }
}
