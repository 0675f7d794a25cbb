//! The one way the page's figures and tables are saved: an [`ExportButton`] makes its file when
//! clicked and says "not saved" beside itself when the browser made none.

use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::{Element, HtmlCanvasElement};

use super::svg_picture::{KeyEntry, offer_svg_png};
use crate::web::{offer_download, offer_png};

/// What an export button saves, made when it is clicked.
pub enum Export {
    /// Saved as they are (numbers as CSV).
    Bytes(Vec<u8>),
    /// A canvas, saved as PNG.
    Canvas(HtmlCanvasElement),
    /// An SVG chart drawn into a PNG, with its key and a note under it.
    Chart {
        svg: Element,
        key: Vec<KeyEntry>,
        note: String,
    },
}

impl Export {
    pub fn text(text: String) -> Self {
        Self::Bytes(text.into_bytes())
    }

    /// Saves it as `file`; whether the browser was handed a file.
    async fn save(self, file: &str) -> bool {
        match self {
            Self::Bytes(bytes) => offer_download(&bytes, file).is_ok(),
            Self::Canvas(canvas) => offer_png(&canvas, file).is_ok(),
            Self::Chart { svg, key, note } => offer_svg_png(&svg, &key, &note, file).await,
        }
    }
}

/// A small button that saves what `make` gives as `file`; when `make` gives nothing or the
/// browser refuses the file, "not saved" shows beside it (read out) until a click saves one.
#[component]
pub fn ExportButton(
    /// The button's text ("PNG", "CSV", "Curves as CSV").
    label: &'static str,
    #[prop(into)] testid: String,
    /// The file's name.
    #[prop(into)]
    file: String,
    #[prop(into)] make: Callback<(), Option<Export>>,
    /// Whether there is anything to save yet: the button comes with what it saves, and is not
    /// shown until there is.
    #[prop(optional, into)]
    ready: Option<Signal<bool>>,
    /// The button's tooltip.
    #[prop(optional)]
    title: Option<&'static str>,
    /// A full-size button rather than a small one beside a figure.
    #[prop(optional)]
    large: bool,
) -> impl IntoView {
    let failed = RwSignal::new(false);
    let file = StoredValue::new(file);
    let save = move |_| {
        let export = make.run(());
        spawn_local(async move {
            let saved = match export {
                Some(export) => export.save(&file.get_value()).await,
                None => false,
            };
            failed.set(!saved);
        });
    };
    // The button and its message are one item of a row of buttons: the message, empty while
    // nothing failed, takes no room.
    view! {
        <span class="export-button" hidden=move || ready.is_some_and(|ready| !ready.get())>
            <button class:small=!large data-testid=testid title=title on:click=save>{label}</button>
            <span class="save-failed" role="status">{move || failed.get().then_some("not saved: this browser could not make the file")}</span>
        </span>
    }
}
