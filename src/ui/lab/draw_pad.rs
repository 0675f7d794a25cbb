//! The pad a person draws a digit on, read back as the model's 28×28 input.

use leptos::ev::PointerEvent;
use leptos::html::Canvas;
use leptos::prelude::*;
use web_sys::HtmlCanvasElement;

use crate::analysis::preprocess;
use crate::data::IMAGE_SIDE;
use crate::ui::widgets::paint;

/// Side of the drawing surface in canvas pixels; ten times MNIST's 28.
pub const PAD_SIDE: u32 = 280;
/// Pen width: about two MNIST pixels once a digit is fitted to 20×20.
const PEN_WIDTH: f64 = 20.0;

type Stroke = Vec<(f64, f64)>;

fn point(canvas: &HtmlCanvasElement, event: &PointerEvent) -> (f64, f64) {
    let rect = canvas.get_bounding_client_rect();
    let sx = canvas.width() as f64 / rect.width().max(1.0);
    let sy = canvas.height() as f64 / rect.height().max(1.0);
    (
        (event.client_x() as f64 - rect.left()) * sx,
        (event.client_y() as f64 - rect.top()) * sy,
    )
}

fn setup_pen(canvas: &HtmlCanvasElement) {
    if let Some(ctx) = paint::context(canvas) {
        ctx.set_line_width(PEN_WIDTH);
        ctx.set_line_cap("round");
        ctx.set_line_join("round");
        ctx.set_stroke_style_str("white");
        ctx.set_fill_style_str("white");
    }
}

fn draw_segment(canvas: &HtmlCanvasElement, from: (f64, f64), to: (f64, f64)) {
    if let Some(ctx) = paint::context(canvas) {
        ctx.begin_path();
        ctx.move_to(from.0, from.1);
        ctx.line_to(to.0, to.1);
        ctx.stroke();
    }
}

fn redraw(canvas: &HtmlCanvasElement, strokes: &[Stroke]) {
    let Some(ctx) = paint::context(canvas) else {
        return;
    };
    ctx.set_fill_style_str("black");
    ctx.fill_rect(0.0, 0.0, canvas.width() as f64, canvas.height() as f64);
    setup_pen(canvas);
    for stroke in strokes {
        let Some(&first) = stroke.first() else {
            continue;
        };
        draw_segment(canvas, first, first);
        for pair in stroke.windows(2) {
            draw_segment(canvas, pair[0], pair[1]);
        }
    }
}

/// The canvas a person draws on, with Clear and Undo. Reports the MNIST-style 28×28 image
/// of the drawing (or `None` when empty) after every change, while drawing too. It can also
/// show a 28×28 image (a test digit); drawing then starts on a blank pad.
#[component]
pub fn DrawPad(
    /// Called with the model's input image after each change of the drawing.
    #[prop(into)]
    on_image: Callback<Option<Vec<u8>>>,
    /// An image to show instead of the drawing, while there is one.
    #[prop(into)]
    shown: Signal<Option<Vec<u8>>>,
) -> impl IntoView {
    let canvas_ref = NodeRef::<Canvas>::new();
    let strokes = StoredValue::new(Vec::<Stroke>::new());
    let drawing = StoredValue::new(false);
    let showing = StoredValue::new(false);

    let emit = move || {
        if let Some(canvas) = canvas_ref.get_untracked() {
            let image = paint::read_grey(&canvas)
                .and_then(|raster| preprocess::to_mnist(&raster))
                .map(|image| image.to_vec());
            on_image.run(image);
        }
    };
    let rerender = move || {
        if let Some(canvas) = canvas_ref.get_untracked() {
            strokes.with_value(|s| redraw(&canvas, s));
        }
        emit();
    };
    Effect::new(move |_| {
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        match shown.get() {
            Some(image) => {
                strokes.update_value(Vec::clear);
                showing.set_value(true);
                paint::grey_image(&canvas, &image, IMAGE_SIDE);
            }
            None => strokes.with_value(|s| redraw(&canvas, s)),
        }
    });

    let on_down = move |event: PointerEvent| {
        let Some(canvas) = canvas_ref.get_untracked() else {
            return;
        };
        event.prevent_default();
        let _ = canvas.set_pointer_capture(event.pointer_id());
        if showing.get_value() {
            showing.set_value(false);
            redraw(&canvas, &[]);
        }
        let p = point(&canvas, &event);
        drawing.set_value(true);
        strokes.update_value(|s| s.push(vec![p]));
        setup_pen(&canvas);
        draw_segment(&canvas, p, p);
        emit();
    };
    let on_move = move |event: PointerEvent| {
        if !drawing.get_value() {
            return;
        }
        let Some(canvas) = canvas_ref.get_untracked() else {
            return;
        };
        event.prevent_default();
        let p = point(&canvas, &event);
        let last = strokes.with_value(|s| s.last().and_then(|stroke| stroke.last().copied()));
        strokes.update_value(|s| {
            if let Some(stroke) = s.last_mut() {
                stroke.push(p);
            }
        });
        if let Some(last) = last {
            draw_segment(&canvas, last, p);
        }
        emit();
    };
    let on_up = move |_event: PointerEvent| drawing.set_value(false);

    view! {
        <div class="draw-pad">
            <canvas
                node_ref=canvas_ref
                width=PAD_SIDE
                height=PAD_SIDE
                class="pad"
                data-testid="draw-canvas"
                role="img"
                aria-label="drawing pad: draw a digit with a mouse, a finger or a pen (or show a random test digit below)"
                style="touch-action: none"
                on:pointerdown=on_down
                on:pointermove=on_move
                on:pointerup=on_up
                on:pointercancel=on_up
            ></canvas>
            <div class="buttons">
                <button
                    data-testid="undo-button"
                    on:click=move |_| {
                        strokes.update_value(|s| {
                            s.pop();
                        });
                        showing.set_value(false);
                        rerender();
                    }
                >
                    "Undo"
                </button>
                <button
                    data-testid="clear-button"
                    on:click=move |_| {
                        strokes.update_value(Vec::clear);
                        showing.set_value(false);
                        rerender();
                    }
                >
                    "Clear"
                </button>
            </div>
        </div>
    }
}
