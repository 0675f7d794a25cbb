//! Asks for the story of each new reading of the drawing: the image it was of, with the
//! heads it was read with, put to the CPU's drawing worker (the only one that tells stories;
//! the GPU's worker binary is held to 3 MB). One question at a time, and only the newest
//! waits, as the classifications themselves: the story follows the pen without a queue.

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::analysis::story::Story;
use crate::data::IMAGE_PIXELS;
use crate::model::HeadsOff;
use crate::ui::state::{Classifications, Drawing, ModelHost};
use crate::web::DrawingError;

/// The story of the newest reading, and the image it is of.
#[derive(Clone, Copy)]
pub(super) struct StoryTeller {
    host: ModelHost,
    /// The image the story (and the reading it follows) is of.
    pub input: RwSignal<Option<Vec<u8>>>,
    /// The newest story told, and the image it is of (while the next is told, the one
    /// before stays on screen).
    pub story: RwSignal<Option<(Vec<u8>, Arc<Story>)>>,
    /// Why the newest story could not be told, if it could not.
    pub failed: RwSignal<Option<DrawingError>>,
    in_flight: StoredValue<bool>,
    waiting: StoredValue<Option<([u8; IMAGE_PIXELS], HeadsOff)>>,
}

impl StoryTeller {
    /// Whether the story shown is of the image shown (tracked).
    pub fn caught_up(self) -> bool {
        self.input.with(|input| {
            self.story
                .with(|story| story.as_ref().map(|(image, _)| image) == input.as_ref())
        })
    }

    /// Follows `classifier`'s readings while the story is shown.
    pub fn new(drawing: Drawing, host: ModelHost, classifier: Classifications) -> Self {
        let teller = Self {
            host,
            input: RwSignal::new(drawing.model_input.get_untracked()),
            story: RwSignal::new(None),
            failed: RwSignal::new(None),
            in_flight: StoredValue::new(false),
            waiting: StoredValue::new(None),
        };
        Effect::new(move |_| {
            let read = classifier.result.with(Option::is_some);
            let image = drawing.model_input.get_untracked().filter(|_| read);
            teller.input.set(image.clone());
            match image.and_then(|image| <[u8; IMAGE_PIXELS]>::try_from(image).ok()) {
                Some(image) => teller.ask(image, classifier.result_off.get_untracked()),
                None => {
                    teller.waiting.set_value(None);
                    teller.story.set(None);
                    teller.failed.set(None);
                }
            }
        });
        teller
    }

    fn ask(self, image: [u8; IMAGE_PIXELS], off: HeadsOff) {
        if self.in_flight.get_value() {
            self.waiting.set_value(Some((image, off)));
            return;
        }
        self.in_flight.set_value(true);
        spawn_local(async move {
            let mut next = Some((image, off));
            while let Some((image, off)) = next {
                let engine = self
                    .host
                    .cpu
                    .get_value()
                    .or_else(|| self.host.engine.get_untracked());
                let Some(engine) = engine else {
                    break;
                };
                match engine.story(&image, off).await {
                    Ok(story) => {
                        self.failed.set(None);
                        self.story.set(Some((image.to_vec(), Arc::new(story))));
                    }
                    Err(why) => self.failed.set(Some(why)),
                }
                next = self.waiting.try_update_value(Option::take).flatten();
            }
            // The card may be gone by now (its place left): nothing is kept for it.
            self.in_flight.try_set_value(false);
        });
    }
}
