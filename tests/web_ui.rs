//! Browser tests of the page's interface (the `ui` feature), built as Trunk builds the page
//! (`--no-default-features --features ui`), so they share its build of the library; the rest,
//! with the workers' features, are in `web.rs`. Headless Chromium, as `web.rs` (scripts/test.sh).
#![cfg(all(target_arch = "wasm32", feature = "ui"))]

mod browser;

use std::rc::Rc;

use browser::{PARITY_WEIGHTS, engine_here, real_digits, sleep};
use leptos::prelude::*;
use vitlab::analysis::preprocess;
use vitlab::data::{IMAGE_PIXELS, IMAGE_SIDE};
use vitlab::model::HeadsOff;
use vitlab::share::View;
use vitlab::ui::{AppState, Handwriting, Lab, Revealed, ShownDigit, paint};
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{HtmlCanvasElement, PointerEvent, PointerEventInit};

wasm_bindgen_test_configure!(run_in_browser);

fn document() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

fn new_canvas(side: u32) -> HtmlCanvasElement {
    let canvas: HtmlCanvasElement = document()
        .create_element("canvas")
        .unwrap()
        .unchecked_into();
    canvas.set_width(side);
    canvas.set_height(side);
    canvas
}

#[wasm_bindgen_test]
fn a_known_stroke_preprocesses_to_the_expected_image() {
    // A white 40×200 bar on black, as the pad draws: fitted to 4×20, centred in 28×28.
    let canvas = new_canvas(280);
    let ctx = paint::context(&canvas).unwrap();
    ctx.set_fill_style_str("black");
    ctx.fill_rect(0.0, 0.0, 280.0, 280.0);
    ctx.set_fill_style_str("white");
    ctx.fill_rect(10.0, 50.0, 40.0, 200.0);
    let raster = paint::read_grey(&canvas).unwrap();
    let image = preprocess::to_mnist(&raster).unwrap();
    let mut expected = [0u8; IMAGE_PIXELS];
    for y in 4..24 {
        for x in 12..16 {
            expected[y * IMAGE_SIDE + x] = 255;
        }
    }
    assert_eq!(image.to_vec(), expected.to_vec());
}

fn pointer(kind: &str, x: f64, y: f64) -> PointerEvent {
    let init = PointerEventInit::new();
    init.set_pointer_id(1);
    init.set_bubbles(true);
    init.set_client_x(x as i32);
    init.set_client_y(y as i32);
    init.set_buttons(1);
    PointerEvent::new_with_event_init_dict(kind, &init).unwrap()
}

fn by_test_id(id: &str) -> web_sys::Element {
    document()
        .query_selector(&format!("[data-testid=\"{id}\"]"))
        .unwrap()
        .unwrap_or_else(|| panic!("no element with data-testid={id}"))
}

/// The probability bars' values, digit by digit.
fn probabilities_shown() -> Vec<f32> {
    (0..10)
        .map(|d| {
            by_test_id(&format!("probability-{d}"))
                .get_attribute("data-value")
                .unwrap()
                .parse::<f32>()
                .unwrap()
        })
        .collect()
}

#[wasm_bindgen_test]
async fn the_lab_mounts_and_a_stroke_gets_a_prediction() {
    let engine = Rc::new(engine_here(PARITY_WEIGHTS).await);
    let container = document().create_element("div").unwrap();
    document().body().unwrap().append_child(&container).unwrap();
    let mut app = AppState::new(None, "", View::default());
    app.revealed = Revealed::all();
    let shown_digit = app.drawing.shown_digit;
    let in_lab = engine.clone();
    let handle = leptos::mount::mount_to(container.unchecked_into(), move || {
        app.host.engine.set(Some(in_lab));
        app.provide();
        provide_context(Handwriting::new());
        view! { <Lab /> }
    });
    assert_eq!(by_test_id("prediction").text_content().unwrap(), "–");

    // A vertical stroke down the middle of the pad: a "1".
    let canvas = by_test_id("draw-canvas");
    let rect = canvas.get_bounding_client_rect();
    let x = rect.left() + rect.width() / 2.0;
    canvas
        .dispatch_event(&pointer("pointerdown", x, rect.top() + 40.0))
        .unwrap();
    for step in 1..=10 {
        let y = rect.top() + 40.0 + step as f64 * 20.0;
        canvas
            .dispatch_event(&pointer("pointermove", x, y))
            .unwrap();
    }
    canvas
        .dispatch_event(&pointer("pointerup", x, rect.top() + 240.0))
        .unwrap();

    let mut prediction = String::new();
    for _ in 0..100 {
        sleep(50).await;
        prediction = by_test_id("prediction").text_content().unwrap();
        if prediction != "–" {
            break;
        }
    }
    let digit: usize = prediction.parse().expect("a digit is shown");
    assert!(digit < 10);
    let total: f32 = probabilities_shown().iter().sum();
    assert!((total - 1.0).abs() < 1e-3, "probabilities sum to {total}");

    // Clear empties the prediction again.
    by_test_id("clear-button")
        .unchecked_into::<web_sys::HtmlElement>()
        .click();
    sleep(20).await;
    assert_eq!(by_test_id("prediction").text_content().unwrap(), "–");

    // A test digit in the panel: the model is given that very image, so the panel shows
    // what classifying it directly gives.
    let test_set = real_digits(8);
    let shown = ShownDigit::of_test_set(&test_set, 5);
    let image: [u8; IMAGE_PIXELS] = shown.image.clone().try_into().unwrap();
    let direct = engine.classify(&image, HeadsOff::default()).await.unwrap();
    shown_digit.set(Some(shown));
    let mut probabilities = Vec::new();
    for _ in 0..100 {
        sleep(50).await;
        probabilities = probabilities_shown();
        if probabilities.iter().any(|&p| p > 0.0) {
            break;
        }
    }
    for (panel, alone) in probabilities.iter().zip(&direct.probabilities) {
        assert!(
            (panel - alone).abs() < 1e-5,
            "{probabilities:?} against {:?}",
            direct.probabilities
        );
    }
    let caption = by_test_id("shown-digit");
    assert_eq!(
        caption.get_attribute("data-label").unwrap(),
        test_set.labels[5].to_string()
    );
    // Drawing puts the pad's own image back.
    canvas
        .dispatch_event(&pointer("pointerdown", x, rect.top() + 40.0))
        .unwrap();
    canvas
        .dispatch_event(&pointer("pointerup", x, rect.top() + 40.0))
        .unwrap();
    sleep(20).await;
    assert!(shown_digit.get_untracked().is_none());
    assert!(
        document()
            .query_selector("[data-testid=shown-digit]")
            .unwrap()
            .is_none()
    );
    drop(handle);
}
