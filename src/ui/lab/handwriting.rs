//! "Not a 7? Teach it.": one click beside the prediction says what the drawing really was and
//! keeps the model's input with that label in the person's own set; the card shows the set
//! (each digit, its label, what the model in use reads), relabels and deletes, and saves and
//! opens it as MNIST's own two files.

use std::rc::Rc;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::fine_tune::LearnMyHandwriting;
use crate::data::{PERSONAL_IMAGES_FILE, PERSONAL_LABELS_FILE, PersonalSet};
use crate::place::{Address, Place};
use crate::ui::state::{Handwriting, LabState};
use crate::ui::widgets::{Export, ExportButton, HeatCanvas, Palette, read_file};

/// The newest digits the gallery shows; the rest are counted.
const SHOWN: usize = 120;
/// Digits read in one request to the drawing worker.
const READ_AT_ONCE: usize = 250;

/// "It is a …": ten buttons under the prediction, each adding the model's input with that
/// label to the person's set.
#[component]
pub(super) fn TeachButtons() -> impl IntoView {
    let lab = expect_context::<LabState>();
    let handwriting = expect_context::<Handwriting>();
    let said = RwSignal::new(None::<String>);
    let teach = move |label: u8| {
        let Some(image) = lab.model_input.get_untracked() else {
            return;
        };
        // The set kept in the browser is read first, so that the count said is the set's.
        spawn_local(async move {
            said.set(Some(match handwriting.add(&image, label).await {
                Ok(()) => format!(
                    "Kept as a {label}: {} in your set.",
                    handwriting.set.with_untracked(|s| s.len())
                ),
                Err(why) => format!("Not kept: {why}."),
            }));
        });
    };
    // A new drawing is a new question.
    Effect::new(move |_| {
        lab.model_input.track();
        said.set(None);
    });
    // Offered with a drawing to keep, not before.
    view! {
        {move || lab.model_input.with(Option::is_some).then(|| view! {
            <div class="teach" role="group" aria-label="what the drawing really is">
                <span class="teach-label">"It is a"</span>
                {(0..10u8)
                    .map(|label| view! {
                        <button class="teach-digit" data-testid=format!("teach-{label}")
                            title=format!("Keep this drawing in your set as a {label}")
                            on:click=move |_| teach(label)>{label}</button>
                    })
                    .collect_view()}
            </div>
        })}
        <p class="teach-said" data-testid="teach-said" role="status">{move || said.get()}</p>
    }
}

/// The set: what each digit is and what the model reads in it, with its files.
#[component]
pub(super) fn HandwritingCard() -> impl IntoView {
    let lab = expect_context::<LabState>();
    let handwriting = expect_context::<Handwriting>();
    spawn_local(handwriting.load());
    let set = handwriting.set;
    // What the model in use reads in each digit: read again for other images or another
    // model, not for a label changed; a few hundred digits a request, so that a drawing
    // waits for one at most.
    let images_memo = Memo::new(move |_| set.with(|s| Arc::new(s.images.clone())));
    let reads = RwSignal::new(None::<Vec<(u8, f32)>>);
    let read_failed = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let images = images_memo.get();
        // Read on the CPU copy of the model in use (see `LabState::cpu_engine`).
        let engine = lab
            .engine
            .get()
            .map(|e| lab.cpu_engine.get_value().unwrap_or(e));
        reads.set(None);
        read_failed.set(None);
        let Some(engine) = engine.filter(|_| !images.is_empty()) else {
            return;
        };
        spawn_local(async move {
            // Never once the card is gone (Handwriting left while the digits were read).
            let current = || {
                images_memo
                    .try_get_untracked()
                    .is_some_and(|now| Arc::ptr_eq(&images, &now))
                    && lab
                        .cpu_engine
                        .with_value(|e| e.as_ref().is_none_or(|e| Rc::ptr_eq(e, &engine)))
            };
            let mut read = Vec::with_capacity(images.len());
            for part in images.chunks(READ_AT_ONCE) {
                match engine.read(part).await {
                    Ok(part) => read.extend(part),
                    Err(why) => {
                        if current() {
                            read_failed.set(Some(why.to_string()));
                        }
                        return;
                    }
                }
                if !current() {
                    return;
                }
            }
            reads.set(Some(read));
        });
    });
    let has_digits = Memo::new(move |_| set.with(|s| !s.is_empty()));
    let correct = move || {
        let labels = set.with(|s| s.labels.clone());
        reads.with(|r| {
            r.as_ref().map(|read| {
                read.iter()
                    .zip(&labels)
                    .filter(|((digit, _), label)| digit == *label)
                    .count()
            })
        })
    };
    view! {
        {move || set.with(|s| s.is_empty()).then(|| view! {
            <div class="chart-empty" data-testid="no-digits">
                <p>"No digits yet. Draw one, then say what it is with " <strong>"It is a …"</strong> " under the prediction: the model's 28×28 input is kept here with your label."</p>
                <a class="button primary" href=Address::of(Place::Draw).fragment()>"Draw a digit"</a>
            </div>
        })}
        <details class="why">
            <summary>"Where your digits are kept, and their files"</summary>
            <p class="hint">
                "The model's input (the 28×28 image it read) is kept with your label in this browser. Saved as MNIST's own files, they open in any MNIST tool and in "
                <code>"vit eval --personal DIR"</code>" and "<code>"vit train --extra DIR"</code>"."
            </p>
        </details>
        <SetFiles />
        <p class="caption" data-testid="handwriting-count" data-count=move || set.with(|s| s.len()).to_string()
            data-loaded=move || handwriting.loaded.get().to_string()>
            {move || {
                let count = set.with(|s| s.len());
                match (count, correct()) {
                    (0, _) => "No digits yet.".to_string(),
                    (n, Some(right)) => format!("{n} digits; the model in use reads {right} of them as you labelled them."),
                    (n, None) => format!("{n} digits."),
                }
            }}
        </p>
        {move || handwriting.problem.get().map(|problem| view! { <p class="error" role="alert">{problem}</p> })}
        {move || read_failed.get().map(|why| view! { <p class="hint">{format!("What the model reads in them is not shown: {why}.")}</p> })}
        <ol class="gallery" data-testid="handwriting-gallery">
            {move || {
                let total = set.with(|s| s.len());
                (total.saturating_sub(SHOWN)..total).rev().map(|index| view! { <GalleryDigit index=index reads=reads /> }).collect_view()
            }}
        </ol>
        {move || set.with(|s| s.len() > SHOWN).then(|| view! {
            <p class="hint">{move || format!("The newest {SHOWN} shown; {} more are in the set and its files.", set.with(|s| s.len()).saturating_sub(SHOWN))}</p>
        })}
        // Offered once there are digits to learn: a Memo, so that adding one does not build
        // it again.
        {move || has_digits.get().then(|| view! { <LearnMyHandwriting /> })}
    }
}

/// One digit of the set: its image, its label (a select to relabel), what the model reads,
/// and a button to delete it.
#[component]
fn GalleryDigit(index: usize, reads: RwSignal<Option<Vec<(u8, f32)>>>) -> impl IntoView {
    let handwriting = expect_context::<Handwriting>();
    let set = handwriting.set;
    let pixels = Signal::derive(move || {
        set.with(|s| {
            s.images
                .get(index)
                .map(|image| image.iter().map(|&p| f32::from(p)).collect())
                .unwrap_or_default()
        })
    });
    let label = move || set.with(|s| s.labels.get(index).copied().unwrap_or(0));
    let read = move || reads.with(|r| r.as_ref().and_then(|r| r.get(index).copied()));
    let relabel = move |event| {
        if let Ok(label) = event_target_value(&event).parse::<u8>() {
            handwriting.relabel(index, label);
        }
    };
    view! {
        <li class="gallery-digit" data-testid="handwriting-digit" data-label=move || label().to_string()
            data-read=move || read().map(|(d, _)| d.to_string()).unwrap_or_default()>
            <HeatCanvas values=pixels grid=28 size=56 palette=Palette::Grey title=format!("digit {}", index + 1) />
            <span class="gallery-controls">
                <select aria-label=format!("the label of digit {}", index + 1) on:change=relabel>
                    {(0..10u8).map(|d| view! { <option value=d.to_string() selected=move || label() == d>{d}</option> }).collect_view()}
                </select>
                <button class="delete" title=format!("Delete digit {}", index + 1) aria-label=format!("delete digit {}", index + 1)
                    on:click=move |_| handwriting.delete(index)>"×"</button>
            </span>
            <span class="reads" class:wrong=move || read().is_some_and(|(d, _)| d != label())>
                {move || read().map(|(d, p)| format!("reads {d} ({:.0}%)", 100.0 * p)).unwrap_or_else(|| "…".into())}
            </span>
        </li>
    }
}

/// The set's two files, and opening a pair of them.
#[component]
fn SetFiles() -> impl IntoView {
    let handwriting = expect_context::<Handwriting>();
    let set = handwriting.set;
    let said = RwSignal::new(None::<String>);
    let confirming = RwSignal::new(false);
    // The set's images file, or its labels file.
    let files = move |labels: bool| {
        move || {
            let set: Arc<PersonalSet> = set.get_untracked();
            let (images_file, labels_file) = set.to_idx_gz();
            let file = if labels { labels_file } else { images_file };
            (!set.is_empty()).then_some(Export::Bytes(file))
        }
    };
    let ready = Signal::derive(move || set.with(|s| !s.is_empty()));
    let import = move |event: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&event);
        let chosen: Vec<web_sys::File> = input
            .files()
            .map(|list| (0..list.length()).filter_map(|i| list.get(i)).collect())
            .unwrap_or_default();
        input.set_value("");
        spawn_local(async move {
            said.set(Some(import_files(handwriting, chosen).await));
        });
    };
    let delete_all = move |_| {
        if confirming.get_untracked() {
            handwriting.delete_all();
            confirming.set(false);
            // The button goes with the set: the keyboard lands on opening one.
            crate::web::address::focus("handwriting-open");
            said.set(Some("Every digit deleted.".into()));
        } else {
            confirming.set(true);
        }
    };
    view! {
        <div class="buttons">
            <ExportButton label="Save images" large=true testid="handwriting-images" file=PERSONAL_IMAGES_FILE ready=ready make=files(false) />
            <ExportButton label="Save labels" large=true testid="handwriting-labels" file=PERSONAL_LABELS_FILE ready=ready make=files(true) />
            <label class="upload">
                <span>"Open a set (both files): "</span>
                <input type="file" multiple accept=".gz" id="handwriting-open" data-testid="handwriting-open" on:change=import />
            </label>
            {move || (ready.get() && handwriting.loaded.get()).then(|| view! {
                <button data-testid="handwriting-delete-all" on:click=delete_all>
                    {move || if confirming.get() { format!("Delete all {}? Click again", set.with(|s| s.len())) } else { "Delete all".into() }}
                </button>
            })}
        </div>
        <p class="teach-said" data-testid="handwriting-said" role="status">{move || said.get()}</p>
    }
}

/// Reads the two files chosen (in either order) and adds their digits; what happened.
async fn import_files(handwriting: Handwriting, files: Vec<web_sys::File>) -> String {
    let [first, second] = match <[web_sys::File; 2]>::try_from(files) {
        Ok(pair) => pair,
        Err(files) => {
            return format!(
                "Choose both files of a set, its images and its labels ({} chosen).",
                files.len()
            );
        }
    };
    let mut read = Vec::with_capacity(2);
    for file in [&first, &second] {
        match read_file(file).await {
            Ok(bytes) => read.push(bytes),
            Err(error) => return format!("{}: {error}. Nothing was added.", file.name()),
        }
    }
    match handwriting.import(&read[0], &read[1]).await {
        Ok(count) => format!(
            "Added {count} digits from {} and {}.",
            first.name(),
            second.name()
        ),
        Err(why) => format!("Nothing was added: {why}."),
    }
}
