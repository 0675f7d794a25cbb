//! The pad a person draws a digit on, read back as the model's 28×28 input.

use leptos::ev::PointerEvent;
use leptos::html::Canvas;
use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::HtmlCanvasElement;

use crate::analysis::preprocess;
use crate::data::IMAGE_SIDE;
use crate::example_digit::{PAD_SIDE, PEN_WIDTH, example_strokes, is_example};
use crate::ui::widgets::paint;
use crate::web;

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
    /// Someone drew, undid, cleared or showed a digit here: the example is not drawn.
    touched: StoredValue<bool>,
    /// The pad holds the example (drawing or drawn), not the person's own: the pad says so.
    example_shown: RwSignal<bool>,
    on_image: Callback<PadImage>,
}

impl Pad {
    fn new(on_image: Callback<PadImage>, strokes: StoredValue<Vec<Stroke>>) -> Self {
        Self {
            canvas_ref: NodeRef::new(),
            strokes,
            drawing: StoredValue::new(false),
            showing: StoredValue::new(false),
            touched: StoredValue::new(false),
            example_shown: RwSignal::new(
                strokes.with_value(|strokes| is_example(strokes, PAD_SIDE as f64)),
            ),
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
                self.touched.set_value(true);
                self.example_shown.set(false);
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
        self.touched.set_value(true);
        self.example_shown.set(false);
        // A shown digit, or the example (drawn or drawing), gives way to the person's own.
        let example = self
            .strokes
            .with_value(|strokes| is_example(strokes, PAD_SIDE as f64));
        if self.showing.get_value() || example {
            self.showing.set_value(false);
            self.strokes.update_value(Vec::clear);
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
        self.touched.set_value(true);
        self.example_shown.set(false);
        self.strokes.update_value(|s| {
            s.pop();
        });
        self.showing.set_value(false);
        self.rerender();
    }

    fn clear(self) {
        self.touched.set_value(true);
        self.example_shown.set(false);
        self.strokes.update_value(Vec::clear);
        self.showing.set_value(false);
        self.rerender();
    }
}

impl Pad {
    /// Draws the example digit (`crate::example_digit`) at a pen's pace on a pad nobody has
    /// touched, read as it grows (a few times, not at every move): the page opens at work. The
    /// person's touch, Undo, Clear or a shown digit ends it (the strokes are then no longer
    /// the part of the example drawn so far), and so does the pad's end.
    fn draw_example(self) {
        let untouched = self.touched.try_get_value() == Some(false)
            && self.showing.try_get_value() == Some(false)
            && self.strokes.try_with_value(Vec::is_empty) == Some(true);
        if !untouched {
            return;
        }
        self.example_shown.set(true);
        spawn_local(async move {
            let side = PAD_SIDE as f64;
            let strokes = example_strokes(side);
            let points: usize = strokes.iter().map(Vec::len).sum();
            let mut drawn = 0;
            for stroke in strokes {
                let mut last = None;
                for point in stroke {
                    let as_left = self.strokes.try_with_value(|strokes| {
                        strokes.iter().map(Vec::len).sum::<usize>() == drawn
                            && (drawn == 0 || is_example(strokes, side))
                    });
                    let canvas = self.canvas_ref.try_get_untracked().flatten();
                    let (Some(true), Some(canvas), Some(false)) =
                        (as_left, canvas, self.showing.try_get_value())
                    else {
                        return;
                    };
                    match last {
                        None => {
                            self.strokes
                                .update_value(|strokes| strokes.push(vec![point]));
                            setup_pen(&canvas);
                            draw_segment(&canvas, point, point);
                        }
                        Some(from) => {
                            self.strokes.update_value(|strokes| {
                                if let Some(stroke) = strokes.last_mut() {
                                    stroke.push(point);
                                }
                            });
                            draw_segment(&canvas, from, point);
                        }
                    }
                    drawn += 1;
                    last = Some(point);
                    // A reading repaints ~50 maps (a task of 50-65 ms on a phone): a few along
                    // the way and the whole digit, not one per point, so that a first visit's
                    // page stays free for the person (32 such tasks blocked it for ~0.5 s).
                    if drawn % EXAMPLE_POINTS_PER_READING == 0 || drawn == points {
                        self.emit(web::now_ms());
                    }
                    web::sleep_ms(EXAMPLE_STEP_MS).await;
                }
            }
        });
    }
}

/// Between two points of the example: its ~60 points in about a second and a half.
const EXAMPLE_STEP_MS: u32 = 24;

/// The example is read every this many points (and once whole): ~5 readings as it is drawn.
const EXAMPLE_POINTS_PER_READING: usize = 15;

/// The canvas a person draws on, with Clear and Undo. Reports the MNIST-style 28×28 image
/// of the drawing (or `None` when empty) after every change, while drawing too. It can also
/// show a 28×28 image (a test digit), or draw an example digit by itself; drawing then starts
/// on a blank pad.
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
    /// Once true, the pad draws the example digit by itself, if nobody has touched it yet.
    #[prop(optional, into)]
    example: Option<Signal<bool>>,
) -> impl IntoView {
    let pad = Pad::new(
        on_image,
        strokes.unwrap_or_else(|| StoredValue::new(Vec::new())),
    );
    Effect::new(move |_| pad.show(shown));
    if let Some(example) = example {
        Effect::new(move |_| {
            if example.get() {
                pad.draw_example();
            }
        });
    }
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
            // Over the pad (nothing moves): whose drawing it is, and how to make it one's own.
            {move || pad.example_shown.get().then(|| view! {
                <p class="pad-note" data-testid="example-note">"An example: draw your own to take over"</p>
            })}
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
