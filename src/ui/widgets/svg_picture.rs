//! A chart drawn as SVG, as a picture to save. The page's stylesheet colours the charts, and
//! an SVG loaded as an image sees no stylesheet: the styles each element has on screen are
//! written onto a copy, the copy is drawn onto a canvas, and the chart's key under it.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Element, HtmlCanvasElement};

use super::paint;

/// The computed properties that decide how a chart's lines, dots and labels look.
const STYLED: [&str; 11] = [
    "fill",
    "fill-opacity",
    "stroke",
    "stroke-width",
    "stroke-opacity",
    "stroke-dasharray",
    "stroke-linejoin",
    "opacity",
    "font-size",
    "font-family",
    "text-anchor",
];

/// Pixels per SVG unit: a chart 360 units wide is saved 1,080 pixels wide, sharp on a slide.
const SCALE: f64 = 3.0;
/// The largest chart side drawn, in SVG units (3,000 pixels saved).
const MAX_SIDE: f64 = 1_000.0;
/// Height of one line of the key under the chart, in SVG units.
const KEY_LINE: f64 = 16.0;

/// One entry of a chart's key: what a colour stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyEntry {
    pub label: String,
    /// A CSS colour.
    pub colour: String,
}

/// The colour `element` is drawn in on screen (its stroke, or its fill where it has none).
pub fn drawn_colour(element: &Element) -> Option<String> {
    let style = web_sys::window()?.get_computed_style(element).ok()??;
    let stroke = style.get_property_value("stroke").ok()?;
    if stroke.is_empty() || stroke == "none" {
        style.get_property_value("fill").ok()
    } else {
        Some(stroke)
    }
}

/// Waits for `image` to load; `None` if it fails to.
async fn loaded(image: &web_sys::HtmlImageElement) -> Option<()> {
    // Loaded or failed already: no event is coming.
    if image.complete() {
        return (image.natural_width() > 0).then_some(());
    }
    let load = js_sys::Promise::new(&mut |resolve, reject| {
        image.set_onload(Some(&resolve));
        image.set_onerror(Some(&reject));
    });
    let outcome = JsFuture::from(load).await;
    image.set_onload(None);
    image.set_onerror(None);
    outcome.ok().map(|_| ())
}

/// A key naming, in order, the lines `selector` picks out of `svg`, in the colours they are
/// drawn in.
pub fn key_of(svg: &Element, selector: &str, labels: Vec<String>) -> Vec<KeyEntry> {
    let lines = svg.query_selector_all(selector).ok();
    labels
        .into_iter()
        .enumerate()
        .map(|(i, label)| {
            let colour = lines
                .as_ref()
                .and_then(|l| l.item(i as u32))
                .and_then(|node| node.dyn_into::<Element>().ok())
                .and_then(|line| drawn_colour(&line))
                .unwrap_or_else(|| "#888888".into());
            KeyEntry { label, colour }
        })
        .collect()
}

/// `svg` as shown, with `note` (what the x axis counts, or what the chart shows) under it
/// at the right and `key` listed under that, on a canvas of its own; `None` where the browser cannot make or draw
/// the picture.
pub async fn svg_picture(svg: &Element, key: &[KeyEntry], note: &str) -> Option<HtmlCanvasElement> {
    let window = web_sys::window()?;
    let view_box: Vec<f64> = svg
        .get_attribute("viewBox")?
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    let [_, _, width, height] = view_box[..] else {
        return None;
    };
    // The charts are a few hundred units a side; anything else is not one of them.
    let sane = |side: f64| (1.0..=MAX_SIDE).contains(&side);
    if !sane(width) || !sane(height) {
        return None;
    }
    let copy: Element = svg.clone_node_with_deep(true).ok()?.dyn_into().ok()?;
    let originals = svg.query_selector_all("*").ok()?;
    let copies = copy.query_selector_all("*").ok()?;
    let inline = |from: &Element, to: &Element| -> Option<()> {
        let style = window.get_computed_style(from).ok()??;
        let declarations: String = STYLED
            .iter()
            .filter_map(|name| {
                let value = style.get_property_value(name).ok()?;
                (!value.is_empty()).then(|| format!("{name}:{value};"))
            })
            .collect();
        to.set_attribute("style", &declarations).ok()
    };
    inline(svg, &copy)?;
    for i in 0..originals.length().min(copies.length()) {
        let (Some(from), Some(to)) = (originals.item(i), copies.item(i)) else {
            continue;
        };
        if let (Ok(from), Ok(to)) = (from.dyn_into::<Element>(), to.dyn_into::<Element>()) {
            inline(&from, &to)?;
        }
    }
    copy.set_attribute("width", &(width * SCALE).to_string())
        .ok()?;
    copy.set_attribute("height", &(height * SCALE).to_string())
        .ok()?;
    let text = web_sys::XmlSerializer::new()
        .ok()?
        .serialize_to_string(&copy)
        .ok()?;
    let blob = gloo_file::Blob::new_with_options(text.as_str(), Some("image/svg+xml"));
    let url = gloo_file::ObjectUrl::from(blob);
    let image = web_sys::HtmlImageElement::new().ok()?;
    image.set_src(&url);
    if JsFuture::from(image.decode()).await.is_err() {
        // Safari's decode() refuses SVG images; their load event still comes.
        loaded(&image).await?;
    }

    // The chart's own background and text colour (either theme), or white and near-black
    // where it has no background: never the page's light text on a white picture.
    let shown = window.get_computed_style(svg).ok()??;
    let own = |name: &str| {
        shown
            .get_property_value(name)
            .ok()
            .filter(|c| !c.is_empty() && c != "rgba(0, 0, 0, 0)" && c != "transparent")
    };
    let (background, ink) = match (own("background-color"), own("color")) {
        (Some(background), Some(ink)) => (background, ink),
        _ => ("#ffffff".to_string(), "#1d2230".to_string()),
    };
    // The note on a line of its own, then the key.
    let key_height = KEY_LINE * (key.len() as f64 + 1.5);
    let canvas = paint::new_canvas(
        (width * SCALE).ceil() as u32,
        ((height + key_height) * SCALE).ceil() as u32,
    )?;
    let ctx = paint::context(&canvas)?;
    ctx.set_fill_style_str(&background);
    ctx.fill_rect(0.0, 0.0, canvas.width() as f64, canvas.height() as f64);
    ctx.draw_image_with_html_image_element_and_dw_and_dh(
        &image,
        0.0,
        0.0,
        width * SCALE,
        height * SCALE,
    )
    .ok()?;
    ctx.scale(SCALE, SCALE).ok()?;
    ctx.set_font("11px sans-serif");
    for (i, entry) in key.iter().enumerate() {
        let y = height + KEY_LINE * (i as f64 + 1.5);
        ctx.set_fill_style_str(&entry.colour);
        ctx.fill_rect(12.0, y + 4.0, 14.0, 4.0);
        ctx.set_fill_style_str(&ink);
        let _ = ctx.fill_text(&entry.label, 32.0, y + 10.0);
    }
    ctx.set_fill_style_str(&ink);
    ctx.set_text_align("right");
    let _ = ctx.fill_text(note, width - 8.0, height + KEY_LINE * 0.5 + 10.0);
    Some(canvas)
}

/// Saves `svg` as a PNG called `name` (see [`svg_picture`]); whether a file was offered.
pub async fn offer_svg_png(svg: &Element, key: &[KeyEntry], note: &str, name: &str) -> bool {
    let picture = svg_picture(svg, key, note).await;
    picture.is_some_and(|p| crate::web::offer_png(&p, name).is_ok())
}
