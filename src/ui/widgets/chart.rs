//! Line charts as SVG. The charting crates that target the browser (plotters with its canvas
//! backend, charming through ECharts) redraw a whole canvas or need a JavaScript bundle; these
//! charts are a few polylines that Leptos updates in place, and their points stay readable in
//! the DOM for tests.

use leptos::prelude::*;

use crate::analysis::csv;

use super::{Export, ExportButton, key_of};

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub label: String,
    /// CSS class setting its colour and width.
    pub class: &'static str,
    pub points: Vec<(f64, f64)>,
    /// Mark each point (for sparse series such as test accuracy).
    pub dots: bool,
}

/// What a chart with nothing to plot shows instead of an empty frame: what will fill it and,
/// where there is one, the one action that does.
#[derive(Clone)]
pub struct WhenEmpty {
    pub says: String,
    /// A button's text, its `data-testid`, and what it does.
    pub act: Option<(String, &'static str, Callback<()>)>,
}

impl WhenEmpty {
    pub fn says(says: impl Into<String>) -> Self {
        Self {
            says: says.into(),
            act: None,
        }
    }

    pub fn with_action(
        mut self,
        label: impl Into<String>,
        testid: &'static str,
        act: Callback<()>,
    ) -> Self {
        self.act = Some((label.into(), testid, act));
        self
    }
}

const WIDTH: f64 = 360.0;
const HEIGHT: f64 = 180.0;
const LEFT: f64 = 40.0;
const RIGHT: f64 = 8.0;
const TOP: f64 = 8.0;
const BOTTOM: f64 = 22.0;

/// Smallest and largest of `values`, widened when they coincide.
fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if !lo.is_finite() {
        return None;
    }
    Some(if hi - lo < 1e-9 {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    })
}

fn tick(value: f64) -> String {
    if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

/// What a screen reader says of a chart instead of "image": each line's last value and its
/// range.
fn summary(all: &[Series], x_name: &str) -> String {
    let lines: Vec<String> = all
        .iter()
        .filter_map(|s| {
            let &(x, y) = s.points.last()?;
            let (lo, hi) = bounds(s.points.iter().map(|p| p.1))?;
            Some(format!(
                "{}: {} at {x_name} {x:.0}, from {} to {}",
                s.label,
                tick(y),
                tick(lo),
                tick(hi)
            ))
        })
        .collect();
    if lines.is_empty() {
        "no points yet".to_string()
    } else {
        lines.join("; ")
    }
}

/// The axes, ticks and lines of `all` inside the chart's SVG, scaled to `x` and `y`; nothing
/// where there is nothing to draw (the chart is not shown then: `LineChart`).
fn plot(all: &[Series], x: Option<(f64, f64)>, y: Option<(f64, f64)>) -> AnyView {
    let (Some((x0, x1)), Some((y0, y1))) = (x, y) else {
        return ().into_any();
    };
    let sx = move |v: f64| LEFT + (v - x0) / (x1 - x0).max(1e-9) * (WIDTH - LEFT - RIGHT);
    let sy =
        move |v: f64| TOP + (1.0 - (v.clamp(y0, y1) - y0) / (y1 - y0)) * (HEIGHT - TOP - BOTTOM);
    let lines = all
        .iter()
        .map(|s| {
            let path = s
                .points
                .iter()
                .filter(|p| p.1.is_finite())
                .map(|&(px, py)| format!("{:.1},{:.1}", sx(px), sy(py)))
                .collect::<Vec<_>>()
                .join(" ");
            let dots = s.dots.then(|| {
                s.points
                    .iter()
                    .map(|&(px, py)| view! { <circle cx=sx(px) cy=sy(py) r="2.5" class=s.class></circle> })
                    .collect_view()
            });
            view! {
                <polyline points=path class=format!("series {}", s.class)></polyline>
                {dots}
            }
        })
        .collect_view();
    let mid = (y0 + y1) / 2.0;
    view! {
        <line x1=LEFT y1=TOP x2=LEFT y2=HEIGHT - BOTTOM class="axis"></line>
        <line x1=LEFT y1=HEIGHT - BOTTOM x2=WIDTH - RIGHT y2=HEIGHT - BOTTOM class="axis"></line>
        {[y0, mid, y1]
            .into_iter()
            .map(|v| view! { <text x=LEFT - 4.0 y=sy(v) + 3.0 text-anchor="end" class="tick">{tick(v)}</text> })
            .collect_view()}
        <text x=LEFT y=HEIGHT - 6.0 class="tick">{format!("{x0:.0}")}</text>
        <text x=WIDTH - RIGHT y=HEIGHT - 6.0 text-anchor="end" class="tick">{format!("{x1:.0}")}</text>
        {lines}
    }
    .into_any()
}

/// Lines over a shared x axis (training steps), with the y range fitted unless given. With
/// nothing to plot the chart is not shown: `when_empty` says what fills it instead, if given.
#[component]
pub fn LineChart(
    #[prop(into)] series: Signal<Vec<Series>>,
    /// Fixed y range, e.g. `(0.0, 1.0)` for accuracy.
    #[prop(optional)]
    y_range: Option<(f64, f64)>,
    #[prop(into)] x_label: String,
    #[prop(into)] testid: String,
    #[prop(optional)] when_empty: Option<WhenEmpty>,
) -> impl IntoView {
    let total_points = move || series.with(|s| s.iter().map(|s| s.points.len()).sum::<usize>());
    let has_points = Signal::derive(move || total_points() > 0);
    let x_name = x_label.clone();
    let svg_ref = NodeRef::<leptos::svg::Svg>::new();
    let note = x_label.clone();
    let make_png = Callback::new(move |()| {
        let svg: web_sys::Element = svg_ref.get_untracked()?.into();
        let labels = series.with_untracked(|all| all.iter().map(|s| s.label.clone()).collect());
        let key = key_of(&svg, "polyline.series", labels);
        let note = note.clone();
        Some(Export::Chart { svg, key, note })
    });
    let x_column = x_label.clone();
    let make_csv = Callback::new(move |()| {
        let csv = series.with_untracked(|all| {
            csv::series(
                all.iter().map(|s| (s.label.as_str(), s.points.as_slice())),
                &x_column,
            )
        });
        Some(Export::text(csv))
    });
    let empty_testid = format!("{testid}-empty");
    let placeholder = move || {
        let when = when_empty.clone()?;
        (!has_points.get()).then(|| {
            view! {
                <div class="chart-empty" data-testid=empty_testid.clone()>
                    <p>{when.says.clone()}</p>
                    {when.act.clone().map(|(label, testid, act)| view! {
                        <button class="primary" data-testid=testid on:click=move |_| act.run(())>{label}</button>
                    })}
                </div>
            }
        })
    };
    view! {
        {placeholder}
        <figure class="line-chart" hidden=move || !has_points.get()>
            <svg
                node_ref=svg_ref
                viewBox=format!("0 0 {WIDTH} {HEIGHT}")
                data-testid=testid.clone()
                data-points=move || total_points().to_string()
                role="img"
                aria-label=move || series.with(|all| summary(all, &x_name))
            >
                {move || series.with(|all| {
                    let x = bounds(all.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
                    let y = y_range.or_else(|| bounds(all.iter().flat_map(|s| s.points.iter().map(|p| p.1))));
                    plot(all, x, y)
                })}
            </svg>
            <figcaption>
                {move || {
                    series
                        .get()
                        .into_iter()
                        .map(|s| view! { <span class=format!("key {}", s.class)>{s.label.clone()}</span> })
                        .collect_view()
                }}
                <span class="x-label">{x_label}</span>
                <ExportButton label="PNG" testid=format!("{testid}-png") file=format!("vitlab-{testid}.png") ready=has_points make=make_png />
                <ExportButton label="CSV" testid=format!("{testid}-csv") file=format!("vitlab-{testid}.csv") ready=has_points make=make_csv />
            </figcaption>
        </figure>
    }
}
