//! Uploads read into the page, held to a size cap.

use leptos::prelude::event_target;
use leptos::task::spawn_local;

use crate::web;

/// Why an upload was not read.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("the file is {size_mb} MB, larger than the {cap_mb} MB this page reads")]
    TooLarge { size_mb: f64, cap_mb: usize },
    #[error(transparent)]
    Read(#[from] gloo_file::FileReadError),
}

/// A file input's change handler: the chosen file is read (held to the cap) and handed to
/// `take` with its name, or `refused` hears why it was not.
pub fn on_file_chosen(
    take: impl Fn(Vec<u8>, String) + Copy + 'static,
    refused: impl Fn(String) + Copy + 'static,
) -> impl Fn(leptos::ev::Event) + Copy + 'static {
    move |event| {
        let input: web_sys::HtmlInputElement = event_target(&event);
        let Some(file) = input.files().and_then(|files| files.get(0)) else {
            return;
        };
        // The same file chosen again is a new choice.
        input.set_value("");
        spawn_local(async move {
            let name = file.name();
            match read_file(&file).await {
                Ok(bytes) => take(bytes, name),
                Err(error) => refused(format!("{name}: {error}")),
            }
        });
    }
}

/// Reads an upload, held to the size cap a fetched file has: a file of gigabytes is refused
/// before a byte of it is copied into the page.
pub async fn read_file(file: &web_sys::File) -> Result<Vec<u8>, UploadError> {
    let cap = web::MAX_FETCH_BYTES;
    if file.size() > cap as f64 {
        return Err(UploadError::TooLarge {
            size_mb: (file.size() / (1u64 << 20) as f64).round(),
            cap_mb: cap >> 20,
        });
    }
    let file = gloo_file::File::from(file.clone());
    Ok(gloo_file::futures::read_as_bytes(&file).await?)
}
