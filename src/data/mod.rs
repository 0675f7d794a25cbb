//! MNIST as this project stores it: compressed chunks listed in a manifest, decoded by one
//! reader that the browser and the native tools share.

mod augment;
mod chunk;
mod decoder;
#[cfg(not(target_arch = "wasm32"))]
pub mod idx;
mod loader;
mod manifest;
mod personal;
mod set;

pub use augment::{Augmentation, transform};
pub use chunk::{CHUNK_MAGIC, ChunkError, encode_chunk, sha256_hex};
pub use decoder::{ChunkDecoder, UI_SLICE_BYTES, decode_chunk, decode_chunk_unverified};
pub use loader::{Decoding, GaveUp, Retry, RetryPolicy, load_verified};
pub use manifest::{ChunkEntry, MANIFEST_FORMAT, Manifest, Split};
pub use personal::{
    IdxFile, MAX_PERSONAL_DIGITS, MAX_PERSONAL_FILE_BYTES, PERSONAL_IMAGES_FILE,
    PERSONAL_LABELS_FILE, PersonalSet, PersonalSetError,
};
pub use set::{
    Batch, IMAGE_PIXELS, IMAGE_SIDE, MNIST_MEAN, MNIST_STD, MnistSet, NUM_CLASSES, images_tensor,
    normalize_pixel,
};
