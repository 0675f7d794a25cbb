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
use crate::example_digit::{PAD_SIDE, is_example};
use crate::handwriting_store::{DigitId, KeptDigit};
use crate::place::{Address, Place};
use crate::ui::state::{AppState, Drawing, Handwriting, ModelHost, Training};
use crate::ui::widgets::{Export, ExportButton, HeatCanvas, Palette, read_file};

/// The newest digits the gallery shows; the rest are counted.
const SHOWN: usize = 120;
/// Digits read in one request to the drawing worker.
const READ_AT_ONCE: usize = 250;

/// "It is a …": ten buttons under the prediction, each adding the model's input with that
/// label to the person's set.
#[component]
pub(super) fn TeachButtons() -> impl IntoView {
    let drawing = expect_context::<Drawing>();
    let handwriting = expect_context::<Handwriting>();
    let said = RwSignal::new(None::<String>);
    let teach = move |label: u8| {
        let Some(image) = drawing.model_input.get_untracked() else {
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
        drawing.model_input.track();
        said.set(None);
    });
    // Offered with a drawing or a test digit to keep, not before, and never for the example the
    // page opens on: it is not the person's handwriting, and "It is a 3" would keep it in their
    // set. The pad's strokes are read when the input changes: a stroke, Undo or Clear changes
    // them before the input; a shown test digit, which the pad clears them for in an effect of
    // its own, is told by the digit itself, whichever effect runs first.
    let offered = Memo::new(move |_| {
        drawing.model_input.with(Option::is_some)
            && (drawing.shown_digit.with(Option::is_some)
                || drawing
                    .strokes
                    .try_with_value(|strokes| !is_example(strokes, PAD_SIDE as f64))
                    .unwrap_or(true))
    });
    view! {
        {move || offered.get().then(|| view! {
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
    let host = expect_context::<ModelHost>();
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
        // Read on the CPU copy of the model in use (see `ModelHost::cpu`).
        let engine = host.engine.get().map(|e| host.cpu.get_value().unwrap_or(e));
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
                    && host
                        .cpu
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
    // Digits deleted from the gallery in this visit, each shown in its place with an Undo
    // until the set is emptied.
    let deleted = RwSignal::new(Vec::<KeptDigit>::new());
    // What the set's buttons did (a file opened, digits deleted and the runs that held them).
    let said = RwSignal::new(None::<String>);
    let tiles = Memo::new(move |_| gallery_tiles(&handwriting.ids.get(), &deleted.get()));
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
        <SetFiles deleted=deleted said=said />
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
        {move || handwriting.problem.get().map(|note| view! { <p class="error" role="alert">{note.to_string()}</p> })}
        {move || read_failed.get().map(|why| view! { <p class="hint">{format!("What the model reads in them is not shown: {why}.")}</p> })}
        <ol class="gallery" data-testid="handwriting-gallery">
            <For each=move || tiles.get() key=|tile| *tile let:tile>
                {match tile {
                    Tile::Kept(id) => view! { <GalleryDigit id=id reads=reads deleted=deleted said=said /> }.into_any(),
                    Tile::Deleted(id) => view! { <DeletedDigit id=id deleted=deleted /> }.into_any(),
                }}
            </For>
        </ol>
        {move || set.with(|s| s.len() > SHOWN).then(|| view! {
            <p class="hint">{move || format!("The newest {SHOWN} shown; {} more are in the set and its files.", set.with(|s| s.len()).saturating_sub(SHOWN))}</p>
        })}
        // Offered once there are digits to learn: a Memo, so that adding one does not build
        // it again.
        {move || has_digits.get().then(|| view! { <LearnMyHandwriting /> })}
    }
}

/// A place in the gallery: a digit of the set, or one deleted in this visit (with its Undo).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Tile {
    Kept(DigitId),
    Deleted(DigitId),
}

/// The gallery's places, newest first: the newest [`SHOWN`] digits of the set (`ids`, in the
/// order kept), with the digits deleted in this visit each in the place it had (ids sort in
/// the order digits were kept).
fn gallery_tiles(ids: &[DigitId], deleted: &[KeptDigit]) -> Vec<Tile> {
    let oldest_shown = ids.len().saturating_sub(SHOWN);
    let mut tiles: Vec<Tile> = ids[oldest_shown..]
        .iter()
        .map(|&id| Tile::Kept(id))
        .collect();
    let shown_from = ids.get(oldest_shown).copied().unwrap_or(0);
    tiles.extend(
        deleted
            .iter()
            .filter(|d| d.id >= shown_from && !ids.contains(&d.id))
            .map(|d| Tile::Deleted(d.id)),
    );
    let id = |tile: &Tile| match *tile {
        Tile::Kept(id) | Tile::Deleted(id) => id,
    };
    tiles.sort_by_key(|tile| std::cmp::Reverse(id(tile)));
    tiles
}

/// One digit of the set: its image, its label (a select to relabel), what the model reads,
/// and a button to delete it. Its controls name the digit by its id, so a button acts on the
/// digit it was drawn for, once, wherever the gallery has moved it since.
#[component]
fn GalleryDigit(
    id: DigitId,
    reads: RwSignal<Option<Vec<(u8, f32)>>>,
    deleted: RwSignal<Vec<KeptDigit>>,
    said: RwSignal<Option<String>>,
) -> impl IntoView {
    let handwriting = expect_context::<Handwriting>();
    let (runs, training) = (
        expect_context::<AppState>().keeper,
        expect_context::<Training>(),
    );
    let set = handwriting.set;
    let index = Memo::new(move |_| {
        handwriting
            .ids
            .with(|ids| ids.iter().position(|&i| i == id))
    });
    let pixels = Signal::derive(move || {
        let index = index.get();
        set.with(|s| {
            index
                .and_then(|index| s.images.get(index))
                .map(|image| image.iter().map(|&p| f32::from(p)).collect())
                .unwrap_or_default()
        })
    });
    let label = move || {
        let index = index.get();
        set.with(|s| index.and_then(|i| s.labels.get(i).copied()).unwrap_or(0))
    };
    let read = move || {
        let index = index.get()?;
        reads.with(|r| r.as_ref().and_then(|r| r.get(index).copied()))
    };
    // Its number in the set, oldest first, as a person counts them.
    let number = move || index.get().map_or(0, |i| i + 1);
    let relabel = move |event| {
        if let Ok(label) = event_target_value(&event).parse::<u8>() {
            handwriting.relabel(id, label);
        }
    };
    let delete = move |_| {
        spawn_local(async move {
            if let Ok(Some((digit, runs_said))) = handwriting.delete(id, runs, training).await {
                deleted.update(|all| {
                    if all.iter().all(|d| d.id != digit.id) {
                        all.push(digit);
                    }
                });
                // Said only where a run held it: a digit deleted from the set alone needs no
                // words beside its Undo.
                if let Some(runs_said) = runs_said {
                    said.set(Some(format!("Digit deleted. {runs_said}")));
                }
            }
        });
    };
    view! {
        <li class="gallery-digit" data-testid="handwriting-digit" data-label=move || label().to_string()
            data-read=move || read().map(|(d, _)| d.to_string()).unwrap_or_default()>
            <HeatCanvas values=pixels grid=28 size=56 palette=Palette::Grey title=format!("digit {}", number()) />
            <span class="gallery-controls">
                <select aria-label=move || format!("the label of digit {}", number()) on:change=relabel>
                    {(0..10u8).map(|d| view! { <option value=d.to_string() selected=move || label() == d>{d}</option> }).collect_view()}
                </select>
                <button class="delete" title=move || format!("Delete digit {}", number()) aria-label=move || format!("delete digit {}", number())
                    on:click=delete>"×"</button>
            </span>
            <span class="reads" class:wrong=move || read().is_some_and(|(d, _)| d != label())>
                {move || read().map(|(d, p)| format!("reads {d} ({:.0}%)", 100.0 * p)).unwrap_or_else(|| "…".into())}
            </span>
        </li>
    }
}

/// A digit deleted in this visit, in the place it had: Undo keeps it again. Its Undo sits
/// below where the digit's × was, so the second click of a double-click on the × lands on
/// nothing.
#[component]
fn DeletedDigit(id: DigitId, deleted: RwSignal<Vec<KeptDigit>>) -> impl IntoView {
    let handwriting = expect_context::<Handwriting>();
    let failed = RwSignal::new(None::<String>);
    let undo = move |_| {
        let Some(digit) = deleted.with_untracked(|all| all.iter().find(|d| d.id == id).cloned())
        else {
            return;
        };
        spawn_local(async move {
            match handwriting.restore(digit).await {
                Ok(()) => deleted.update(|all| all.retain(|d| d.id != id)),
                Err(why) => failed.set(Some(format!("Not kept again: {why}."))),
            }
        });
    };
    view! {
        <li class="gallery-digit deleted" data-testid="handwriting-deleted">
            <span class="deleted-mark" aria-hidden="true">"deleted"</span>
            <span class="gallery-controls"></span>
            <button class="undo" data-testid="handwriting-undo" title="Keep this digit again" on:click=undo>"Undo"</button>
            {move || failed.get().map(|why| view! { <span class="reads wrong" role="alert">{why}</span> })}
        </li>
    }
}

/// The set's two files, and opening a pair of them.
/// `deleted`: the digits the gallery offers to undo, which go with the set.
#[component]
fn SetFiles(deleted: RwSignal<Vec<KeptDigit>>, said: RwSignal<Option<String>>) -> impl IntoView {
    let handwriting = expect_context::<Handwriting>();
    let set = handwriting.set;
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
    let (runs, training) = (
        expect_context::<AppState>().keeper,
        expect_context::<Training>(),
    );
    // "Delete all" asks first; its question puts "Keep them" where "Delete all" was, so the
    // second click of a double-click keeps them, and the confirmation is a click of its own.
    let focus_once_drawn = |id: &'static str| {
        spawn_local(async move {
            crate::web::after_next_paint().await;
            crate::web::address::focus(id);
        })
    };
    let ask = move |_| {
        confirming.set(true);
        focus_once_drawn("handwriting-keep-all");
    };
    let keep_them = move |_| {
        confirming.set(false);
        focus_once_drawn("handwriting-delete-all");
    };
    let delete_all = move |_| {
        confirming.set(false);
        deleted.set(Vec::new());
        // The buttons go with the set: the keyboard lands on opening one.
        crate::web::address::focus("handwriting-open");
        said.set(Some("Deleting every digit…".into()));
        spawn_local(async move {
            said.set(Some(match handwriting.delete_all(runs, training).await {
                Ok(None) => "Every digit deleted.".to_string(),
                Ok(Some(runs)) => format!("Every digit deleted. {runs}"),
                Err(why) => format!("Not deleted: {why}."),
            }));
        });
    };
    view! {
        <div class="buttons">
            <ExportButton label="Save images" large=true testid="handwriting-images" file=PERSONAL_IMAGES_FILE ready=ready make=files(false) />
            <ExportButton label="Save labels" large=true testid="handwriting-labels" file=PERSONAL_LABELS_FILE ready=ready make=files(true) />
            <label class="upload">
                <span>"Open a set (both files): "</span>
                <input type="file" multiple accept=".gz" id="handwriting-open" data-testid="handwriting-open" on:change=import />
            </label>
            {move || (ready.get() && handwriting.loaded.get()).then(|| if confirming.get() {
                view! {
                    <span class="confirm" role="group" aria-label="delete every digit?">
                        <button data-testid="handwriting-keep-all" id="handwriting-keep-all" on:click=keep_them>"Keep them"</button>
                        <button class="danger" data-testid="handwriting-delete-all-confirm" on:click=delete_all>
                            {move || format!("Delete all {}", set.with(|s| s.len()))}
                        </button>
                    </span>
                }.into_any()
            } else {
                view! { <button data-testid="handwriting-delete-all" id="handwriting-delete-all" on:click=ask>"Delete all"</button> }.into_any()
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
