//! The data, fetched chunk by chunk while the run trains.

use std::rc::Rc;

use crate::data::{ChunkEntry, Manifest, RetryPolicy, Split};
use crate::protocol::{DataProgress, FromTrainer};

use crate::web::chunks::ChunkSource;

use super::inbox::Inbox;
use super::to_page::{notice, post};

/// Digits of the first training chunk shown to the page.
const SAMPLES: usize = 16;

/// Fetches every chunk: the first training and test chunks first, so training and evaluation
/// can begin while the rest arrive.
pub(super) async fn load_data(source: ChunkSource, manifest: Manifest, inbox: Rc<Inbox>) {
    let generation = inbox.generation.get();
    let (train, test) = (manifest.chunks(Split::Train), manifest.chunks(Split::Test));
    let mut train_chunks_loaded = 0;
    let mut order: Vec<(Split, &ChunkEntry)> = Vec::new();
    order.extend(train.first().map(|c| (Split::Train, c)));
    order.extend(test.first().map(|c| (Split::Test, c)));
    order.extend(train.iter().skip(1).map(|c| (Split::Train, c)));
    order.extend(test.iter().skip(1).map(|c| (Split::Test, c)));
    let mut progress = DataProgress {
        total_chunks: order.len(),
        total_bytes: order.iter().map(|(_, c)| c.bytes).sum(),
        total_images: order.iter().map(|(_, c)| c.items).sum(),
        ..DataProgress::default()
    };
    post(&FromTrainer::Data(progress), None);
    for (split, entry) in order {
        if inbox.generation.get() != generation {
            return;
        }
        let loaded = source
            .load(entry, RetryPolicy::default(), |retry| {
                notice(format!("Retrying {retry}"), false)
            })
            .await;
        if inbox.generation.get() != generation {
            return;
        }
        match loaded {
            Ok(chunk) => {
                progress.chunks += 1;
                progress.bytes += entry.bytes;
                progress.images += chunk.set.len();
                progress.cached_chunks += usize::from(chunk.from_cache);
                post(&FromTrainer::Data(progress), None);
                if split == Split::Train && progress.chunks == 1 {
                    let count = SAMPLES.min(chunk.set.len());
                    post(
                        &FromTrainer::Samples {
                            images: (0..count).map(|i| chunk.set.image(i).to_vec()).collect(),
                            labels: chunk.set.labels[..count].to_vec(),
                        },
                        None,
                    );
                }
                train_chunks_loaded += usize::from(split == Split::Train);
                inbox.deliver(generation, split, chunk.set);
            }
            Err(message) => notice(
                format!("{message}. Training goes on without this chunk."),
                true,
            ),
        }
    }
    if train_chunks_loaded == 0 {
        inbox.give_up(generation);
    }
    inbox.done_loading(generation);
}
