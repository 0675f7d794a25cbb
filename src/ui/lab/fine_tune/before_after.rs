//! The comparison as the card shows it: the scores before and after, one scored digit's maps
//! (saved as one picture or as numbers, like every sheet of maps), and the model kept to draw
//! with.

use std::rc::Rc;

use leptos::prelude::*;

use crate::data::IMAGE_SIDE;
use crate::run_store::short_name;
use crate::ui::state::AppState;
use crate::ui::widgets::thousands;
use crate::ui::widgets::{HeatCanvas, Palette, Sheet, SheetButtons, Tile};
use crate::web::before_after::{Comparison, DigitMaps, Scores};

#[component]
pub(super) fn BeforeAfter(comparison: Rc<Comparison>) -> impl IntoView {
    let app = expect_context::<AppState>();
    let c = comparison;
    let scored = c.scored;
    let personal = |s: &Scores| {
        format!(
            "{} of {scored} ({:.0}%)",
            s.right,
            100.0 * s.right as f64 / scored.max(1) as f64
        )
    };
    let mnist = |s: &Scores| format!("{:.2}%", 100.0 * s.mnist.0 as f64 / s.mnist.1.max(1) as f64);
    let fraction = |right: usize| format!("{right}/{scored}");
    let mnist_fraction = |s: &Scores| format!("{}/{}", s.mnist.0, s.mnist.1);
    let yours = match c.folds {
        Some(folds) => format!("your {scored} digits, each held out by one of {folds} runs"),
        None => format!("your {scored} held-out digits"),
    };
    let weights = StoredValue::new_local(c.weights.clone());
    let run = c.run;
    let use_it = move |_| {
        let bytes = weights.get_value();
        app.use_weights((bytes, format!("fine-tuned run {}", short_name(run))));
        app.go(crate::place::Address::of(crate::place::Place::Draw));
    };
    view! {
        <table class="before-after" data-testid="fine-tune-scores">
            <thead><tr><th></th><th>"before"</th><th>"after"</th></tr></thead>
            <tbody>
                <tr data-testid="fine-tune-personal" data-before=fraction(c.before.right) data-after=fraction(c.after.right)>
                    <th>{yours}</th>
                    <td>{personal(&c.before)}</td><td>{personal(&c.after)}</td>
                </tr>
                <tr data-testid="fine-tune-test" data-before=mnist_fraction(&c.before) data-after=mnist_fraction(&c.after)>
                    <th>{format!("MNIST's first {} test digits", thousands(c.before.mnist.1 as usize))}</th>
                    <td>{mnist(&c.before)}</td><td>{mnist(&c.after)}</td>
                </tr>
            </tbody>
        </table>
        {c.maps.as_ref().map(|maps| view! { <DigitBeforeAfter maps=maps_sheet(maps) /> })}
        {c.maps.is_none().then(|| view! { <p class="hint">"Attention rollout and gradient relevance are a ViT's: this model has neither."</p> })}
        <div class="buttons">
            <button data-testid="fine-tune-use" on:click=use_it>{format!("Draw with run {}", short_name(run))}</button>
        </div>
    }
}

/// The digit, its rollout and its relevance before and after.
fn maps_sheet(maps: &DigitMaps) -> Sheet {
    let tile = |label: String, values: Vec<f32>, grid: usize, palette: Palette| Tile {
        label,
        values,
        grid,
        palette,
    };
    let grey = maps.image.iter().map(|&p| f32::from(p)).collect();
    let [rollout_before, rollout_after] = maps.rollout.clone();
    let [relevance_before, relevance_after] = maps.relevance.clone();
    let [read_before, read_after] = maps.read;
    let (label, grid) = (maps.label, maps.grid);
    Sheet {
        title: format!(
            "A scored {label}: attention rollout and gradient relevance for {label}, before and after fine-tuning"
        ),
        tiles: vec![
            tile(format!("your {label}"), grey, IMAGE_SIDE, Palette::Grey),
            tile(
                format!("rollout before (reads {read_before})"),
                rollout_before,
                grid,
                Palette::Heat,
            ),
            tile(
                format!("rollout after (reads {read_after})"),
                rollout_after,
                grid,
                Palette::Heat,
            ),
            tile(
                format!("relevance for {label} before"),
                relevance_before,
                grid,
                Palette::Heat,
            ),
            tile(
                format!("relevance for {label} after"),
                relevance_after,
                grid,
                Palette::Heat,
            ),
        ],
        columns: 5,
        numbers: false,
    }
}

#[component]
fn DigitBeforeAfter(maps: Sheet) -> impl IntoView {
    let tiles = maps.tiles.clone();
    let title = maps.title.clone();
    let sheet = StoredValue::new(maps);
    view! {
        <figure class="before-after-maps" data-testid="fine-tune-maps">
            <div class="explain-maps">
                {tiles.into_iter().map(|tile| {
                    let values = tile.values;
                    view! {
                        <figure>
                            <HeatCanvas values=Signal::derive(move || values.clone()) grid=tile.grid size=112 palette=tile.palette title=tile.label.clone() />
                            <figcaption>{tile.label}</figcaption>
                        </figure>
                    }
                }).collect_view()}
            </div>
            <figcaption>{title}" "<SheetButtons sheet=Callback::new(move |()| Some(sheet.get_value())) name="fine-tune-maps" /></figcaption>
        </figure>
    }
}
