//! The pad a person draws a digit on, read back as the model's 28×28 input.

use leptos::ev::PointerEvent;
use leptos::html::Canvas;
use leptos::prelude::*;
use web_sys::HtmlCanvasElement;

use crate::analysis::preprocess;
use crate::data::IMAGE_SIDE;
use crate::ui::widgets::paint;
use crate::web;

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
    if let Some(ctx) = paint::read_back_context(canvas) {
        ctx.set_line_width(PEN_WIDTH);
        ctx.set_line_cap("round");
        ctx.set_line_join("round");
        ctx.set_stroke_style_str("white");
        ctx.set_fill_style_str("white");
    }
}

fn draw_segment(canvas: &HtmlCanvasElement, from: (f64, f64), to: (f64, f64)) {
    if let Some(ctx) = paint::read_back_context(canvas) {
        ctx.begin_path();
        ctx.move_to(from.0, from.1);
        ctx.line_to(to.0, to.1);
        ctx.stroke();
    }
}

fn redraw(canvas: &HtmlCanvasElement, strokes: &[Stroke]) {
    let Some(ctx) = paint::read_back_context(canvas) else {
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

/// The model's input from the pad (none when it is empty), and when the input that made it
/// happened: the pointer event's time, in `performance.now()` milliseconds, so that a
/// drawing's latency counts from the stroke, not from when the page got round to it.
#[derive(Debug, Clone, PartialEq)]
pub struct PadImage {
    pub image: Option<Vec<u8>>,
    pub at_ms: f64,
}

/// The pad's canvas and what was drawn on it.
#[derive(Clone, Copy)]
struct Pad {
    canvas_ref: NodeRef<Canvas>,
    strokes: StoredValue<Vec<Stroke>>,
    /// A pointer is down.
    drawing: StoredValue<bool>,
    /// A shown image covers the strokes (none, once it is shown).
    showing: StoredValue<bool>,
    on_image: Callback<PadImage>,
}

impl Pad {
    fn new(on_image: Callback<PadImage>, strokes: StoredValue<Vec<Stroke>>) -> Self {
        Self {
            canvas_ref: NodeRef::new(),
            strokes,
            drawing: StoredValue::new(false),
            showing: StoredValue::new(false),
            on_image,
        }
    }

    /// Reports the drawing as the model's input, made by an input at `at_ms`.
    fn emit(self, at_ms: f64) {
        if let Some(canvas) = self.canvas_ref.get_untracked() {
            let image = paint::read_grey(&canvas)
                .and_then(|raster| preprocess::to_mnist(&raster))
                .map(|image| image.to_vec());
            self.on_image.run(PadImage { image, at_ms });
        }
    }

    fn rerender(self) {
        if let Some(canvas) = self.canvas_ref.get_untracked() {
            self.strokes.with_value(|s| redraw(&canvas, s));
        }
        self.emit(web::now_ms());
    }

    /// Shows `image` over the pad, or the drawing again (tracked: reruns when either the
    /// canvas or the image changes).
    fn show(self, shown: Signal<Option<Vec<u8>>>) {
        let Some(canvas) = self.canvas_ref.get() else {
            return;
        };
        match shown.get() {
            Some(image) => {
                self.strokes.update_value(Vec::clear);
                self.showing.set_value(true);
                if let Some(ctx) = paint::read_back_context(&canvas) {
                    paint::grey_image_on(&ctx, &canvas, &image, IMAGE_SIDE);
                }
            }
            None => self.strokes.with_value(|s| redraw(&canvas, s)),
        }
    }

    fn pen_down(self, event: PointerEvent) {
        let Some(canvas) = self.canvas_ref.get_untracked() else {
            return;
        };
        event.prevent_default();
        let _ = canvas.set_pointer_capture(event.pointer_id());
        if self.showing.get_value() {
            self.showing.set_value(false);
            redraw(&canvas, &[]);
        }
        let p = point(&canvas, &event);
        self.drawing.set_value(true);
        self.strokes.update_value(|s| s.push(vec![p]));
        setup_pen(&canvas);
        draw_segment(&canvas, p, p);
        self.emit(event.time_stamp());
    }

    fn pen_move(self, event: PointerEvent) {
        if !self.drawing.get_value() {
            return;
        }
        let Some(canvas) = self.canvas_ref.get_untracked() else {
            return;
        };
        event.prevent_default();
        let p = point(&canvas, &event);
        let last = self
            .strokes
            .with_value(|s| s.last().and_then(|stroke| stroke.last().copied()));
        self.strokes.update_value(|s| {
            if let Some(stroke) = s.last_mut() {
                stroke.push(p);
            }
        });
        if let Some(last) = last {
            draw_segment(&canvas, last, p);
        }
        self.emit(event.time_stamp());
    }

    fn pen_up(self) {
        self.drawing.set_value(false);
    }

    fn undo(self) {
        self.strokes.update_value(|s| {
            s.pop();
        });
        self.showing.set_value(false);
        self.rerender();
    }

    fn clear(self) {
        self.strokes.update_value(Vec::clear);
        self.showing.set_value(false);
        self.rerender();
    }
}

/// The canvas a person draws on, with Clear and Undo. Reports the MNIST-style 28×28 image
/// of the drawing (or `None` when empty) after every change, while drawing too. It can also
/// show a 28×28 image (a test digit); drawing then starts on a blank pad.
#[component]
pub fn DrawPad(
    /// Called with the model's input image after each change of the drawing.
    #[prop(into)]
    on_image: Callback<PadImage>,
    /// An image to show instead of the drawing, while there is one.
    #[prop(into)]
    shown: Signal<Option<Vec<u8>>>,
    /// Where the strokes are kept: a pad built again (its place left and come back to) shows
    /// them as they were, without reading them again.
    #[prop(optional)]
    strokes: Option<StoredValue<Vec<Stroke>>>,
) -> impl IntoView {
    let pad = Pad::new(
        on_image,
        strokes.unwrap_or_else(|| StoredValue::new(Vec::new())),
    );
    Effect::new(move |_| pad.show(shown));
    view! {
        <div class="draw-pad">
            <canvas
                node_ref=pad.canvas_ref
                width=PAD_SIDE
                height=PAD_SIDE
                class="pad"
                data-testid="draw-canvas"
                role="img"
                aria-label="drawing pad: draw a digit with a mouse, a finger or a pen (or show a random test digit below)"
                style="touch-action: none"
                on:pointerdown=move |event| pad.pen_down(event)
                on:pointermove=move |event| pad.pen_move(event)
                on:pointerup=move |_| pad.pen_up()
                on:pointercancel=move |_| pad.pen_up()
                // A finger lifted at speed leaves Chromium a fling to run even where
                // `touch-action: none` lets nothing scroll, and the next tap anywhere on the
                // page goes to stopping it: the Train button's first tap after a quick stroke
                // was lost (a plain page with such a canvas loses 4 taps in 6; with these, 0).
                // Touches the pad takes for itself start no gesture; the pointer events above
                // still draw. (Leptos attaches these to the canvas itself, where they may
                // cancel; on the document they would be passive.)
                on:touchstart=|event: leptos::ev::TouchEvent| event.prevent_default()
                on:touchmove=|event: leptos::ev::TouchEvent| event.prevent_default()
                on:touchend=|event: leptos::ev::TouchEvent| event.prevent_default()
            ></canvas>
            <div class="buttons">
                <button data-testid="undo-button" on:click=move |_| pad.undo()>
                    "Undo"
                </button>
                <button data-testid="clear-button" on:click=move |_| pad.clear()>
                    "Clear"
                </button>
            </div>
        </div>
    }
}
