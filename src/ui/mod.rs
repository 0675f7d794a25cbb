//! Leptos components. They never touch a tensor: the model sits behind [`crate::web::Engine`].

mod analysis;
mod attention;
mod chart;
mod cnn_view;
mod draw_pad;
mod heat_canvas;
mod inductive_bias;
mod model_host;
pub mod paint;
mod runs;
mod test_digits;
mod timeline;
mod training;

use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

pub use analysis::AnalysisView;
pub use attention::AttentionView;
pub use chart::{LineChart, Series};
pub use cnn_view::CnnView;
pub use draw_pad::DrawPad;
pub use heat_canvas::{HeatCanvas, Palette};
pub use inductive_bias::InductiveBias;
pub use model_host::{EngineSignal, ModelHost, browser_has_webgpu};
pub use runs::{RunKeeper, RunsPanel};
pub use test_digits::{ShownDigit, TestDigits};
pub use timeline::AttentionTimeline;
pub use training::{TrainingPanel, WeightsOffer};

pub use crate::analysis::MapChoice;
use crate::analysis::inference::{Classification, ModelInsight, images_of};
use crate::data::{IMAGE_PIXELS, NUM_CLASSES};
use crate::share::Experiment;
use crate::web::{self, Backend, Engine};

/// The weights the page opens with, relative to the page; `?weights=URL` overrides.
pub const DEFAULT_WEIGHTS: &str = "pretrained/vit-lab.safetensors";
/// The models in `pretrained/` (see its model card), as the page offers them.
pub const SHIPPED_MODELS: [(&str, &str); 3] = [
    (DEFAULT_WEIGHTS, "lab: patch 4, a 7×7 grid"),
    (
        "pretrained/vit-seed.safetensors",
        "seed recipe: patch 7, a 4×4 grid",
    ),
    (
        "pretrained/cnn-teacher.safetensors",
        "CNN: the lab model's teacher, no attention",
    ),
];
/// Test digits for the mean-attention-distance batch, and how many go through at once.
const DISTANCE_BATCH: usize = 64;
const DISTANCE_SLICE: usize = 8;

/// The whole page: starts the model (on the CPU at once; on WebGPU too where the browser has
/// it and it proves faster), then shows the lab.
#[component]
pub fn App() -> impl IntoView {
    let host = ModelHost::new();
    let engine = host.engine;
    let error = RwSignal::new(None::<String>);
    let status = RwSignal::new("Loading the weights…".to_string());
    let batch_distance = RwSignal::new(None::<Vec<Vec<f32>>>);
    // Fetched once, then reused for every model swapped in, and for test digits to draw.
    let test_digits = TestDigits::new();
    let shown_digit = RwSignal::new(None::<ShownDigit>);

    let preferred = web::query_param("backend").and_then(|text| Backend::parse(&text));
    let weights_url = web::query_param("weights").unwrap_or_else(|| DEFAULT_WEIGHTS.to_string());
    let model_source = RwSignal::new(weights_url.clone());
    // The address of the model in use, for a link to the experiment; none for an upload or a
    // training run's weights.
    let model_url = RwSignal::new(Some(weights_url.clone()));
    let (experiment, link_problems) = Experiment::read_query(&web::query());
    if !link_problems.is_empty() {
        error.set(Some(format!("The link: {}.", link_problems.join("; "))));
    }
    let map = RwSignal::new(experiment.map.unwrap_or_default());
    let model_input = RwSignal::new(None::<Vec<u8>>);
    let records = RwSignal::new(Vec::new());
    let runs_problem = RwSignal::new(None::<String>);
    let keeper = RunKeeper::new(records, runs_problem);
    keeper.load();

    spawn_local(async move {
        let bytes = match web::fetch_bytes(&weights_url, |done, total| {
            status.set(match total {
                Some(total) => format!("Loading weights: {} / {} kB", done / 1000, total / 1000),
                None => format!("Loading weights: {} kB", done / 1000),
            })
        })
        .await
        {
            Ok(bytes) => bytes,
            Err(failed) => {
                status.set("No model loaded.".into());
                error.set(Some(failed.to_string()));
                return;
            }
        };
        let backend = preferred.unwrap_or(Backend::Cpu);
        status.set(format!("Warming up on {}…", backend.label()));
        if let Err(message) = host.install(&bytes, backend).await {
            status.set("No model loaded.".into());
            error.set(Some(message));
            return;
        }
        status.set(String::new());
        let vit = engine.with_untracked(|e| e.as_ref().and_then(|e| e.config.vit().cloned()));
        if let Some(config) = &vit
            && !map.get_untracked().fits(config.depth, config.heads)
        {
            error.set(Some(format!(
                "The link: map={}: the model has {} layers of {} heads; ignored.",
                map.get_untracked().to_param(),
                config.depth,
                config.heads
            )));
            map.set(MapChoice::Rollout);
        }
        let digits = distance_digits_of(test_digits).await;
        match &digits {
            // A CNN has no attention to measure.
            Ok(_) if vit.is_none() => {}
            Ok(digits) => match test_batch_distance(host, digits).await {
                Ok(distance) => batch_distance.set(Some(distance)),
                Err(message) => error.set(Some(format!(
                    "The test batch for attention distance: {message}"
                ))),
            },
            Err(message) => error.set(Some(format!(
                "The test batch for attention distance: {message}"
            ))),
        }
        if preferred.is_none() && browser_has_webgpu() {
            // A real digit, so the GPU does the work a drawing gives it.
            let probe = digits
                .ok()
                .and_then(|digits| digits.first().copied())
                .unwrap_or([0; IMAGE_PIXELS]);
            host.choose_faster(&bytes, &probe).await;
        }
    });

    // A failing GPU (lost device, driver reset, a worker that died) must not end the
    // session: the CPU copy of the model takes over.
    let on_failure = Callback::new(move |(failed_on, message): (Backend, String)| {
        match host.fail_over(failed_on, message) {
            Ok(()) => true,
            Err(message) => {
                error.set(Some(message));
                false
            }
        }
    });

    // Weights from the training run or an upload replace the model only once they work.
    let on_weights = Callback::new(move |(bytes, source): WeightsOffer| {
        spawn_local(async move {
            let backend = host.backend().unwrap_or(Backend::Cpu);
            match host.install(&bytes, backend).await {
                Ok(()) => {
                    let shipped = SHIPPED_MODELS.iter().any(|(url, _)| *url == source);
                    model_url.set(shipped.then(|| source.clone()));
                    model_source.set(source);
                    error.set(None);
                    let distance = match distance_digits_of(test_digits).await {
                        Ok(digits) => test_batch_distance(host, &digits).await.ok(),
                        Err(_) => None,
                    };
                    batch_distance.set(distance);
                }
                Err(message) => error.set(Some(format!(
                    "{source} was not loaded: {message}. The model in use stays."
                ))),
            }
        });
    });

    // A shipped model goes through the same checks as any other weights.
    let on_shipped = move |url: String| {
        spawn_local(async move {
            match web::fetch_bytes(&url, |_, _| {}).await {
                Ok(bytes) => on_weights.run((bytes, url)),
                Err(message) => error.set(Some(format!(
                    "{url} was not loaded: {message}. The model in use stays."
                ))),
            }
        })
    };
    let shipped_choice = move || {
        let source = model_source.get();
        let shipped = SHIPPED_MODELS.iter().any(|(url, _)| *url == source);
        if shipped { source } else { String::new() }
    };

    view! {
        <header>
            <div>
                <h1>"vitlab"</h1>
                <p class="tagline">"A Vision Transformer in your browser: draw a digit and watch where it looks."</p>
            </div>
            // Its lines are reserved and each holds one line (the whole text on hover): a note
            // arriving while someone draws must not move the pad under the pen.
            <div class="backend">
                <span>
                    <span data-testid="backend">
                        {move || engine.with(|e| e.as_ref().map(|e| e.backend.label()).unwrap_or("starting…"))}
                    </span>
                    {move || engine.with(|e| e.is_some()).then(|| view! { " · " <span data-testid="model-ready" class="ready">"model ready"</span> })}
                </span>
                {move || host.note.get().map(|note| view! { <span class="note" data-testid="backend-note" title=note.clone()>{note.clone()}</span> })}
                {move || host.timings.get().map(|timings| view! { <span class="note" data-testid="backend-timings" title=timings.clone()>{timings.clone()}</span> })}
            </div>
        </header>
        <main>
        <ErrorBanner error=error />
        {move || (!status.get().is_empty()).then(|| view! { <p class="status" data-testid="status">{status.get()}</p> })}
        <p class="model-source">
            <label>
                "Model: "
                <select data-testid="shipped-model" prop:value=shipped_choice on:change=move |ev| on_shipped(event_target_value(&ev))>
                    {SHIPPED_MODELS.map(|(url, label)| view! { <option value=url>{label}</option> }).collect_view()}
                    <option value="" disabled=true>"trained or loaded here"</option>
                </select>
            </label>
            " in use: " <span data-testid="model-source">{move || model_source.get()}</span>
        </p>
        // Rebuilt when other weights come in (their grid and depth may differ), not when the
        // same weights move to another backend.
        {move || {
            host.generation.get();
            engine.get_untracked().map(|_| view! { <Lab engine=engine on_failure=on_failure on_problem=Callback::new(move |message| error.set(Some(message))) batch_distance=batch_distance test_digits=test_digits digit=shown_digit map=map input=model_input /> })
        }}
        <InductiveBias batch_distance=batch_distance records=records />
        <TrainingPanel
            on_weights=on_weights
            preferred_backend=preferred
            on_digit=Callback::new(move |digit| shown_digit.set(Some(digit)))
            initial_plan=experiment.plan
            map=map
            model_url=model_url
            keeper=keeper
            drawing=model_input
        />
        <RunsPanel keeper=keeper on_weights=on_weights />
        </main>
        <footer>
            "MNIST by Yann LeCun and Corinna Cortes, CC BY-SA 3.0. Model: Dosovitskiy et al., ICLR 2021."
        </footer>
    }
}

/// The first test digits, from the chunk the worker also uses (verified, cached).
async fn distance_digits_of(digits: TestDigits) -> Result<Vec<[u8; IMAGE_PIXELS]>, String> {
    Ok(images_of(&*digits.get().await?, DISTANCE_BATCH))
}

/// Mean attention distance per layer and head over `images`. A GPU that fails meanwhile hands
/// the model to the CPU, as a failed drawing does, and the batch is measured again there.
async fn test_batch_distance(
    host: ModelHost,
    images: &[[u8; IMAGE_PIXELS]],
) -> Result<Vec<Vec<f32>>, String> {
    let engine = host.engine.get_untracked().ok_or("no model")?;
    match batch_distance_on(&engine, images).await {
        Err(message) => {
            host.fail_over(engine.backend, message)?;
            let engine = host.engine.get_untracked().ok_or("no model")?;
            batch_distance_on(&engine, images).await
        }
        measured => measured,
    }
}

async fn batch_distance_on(
    engine: &Engine,
    images: &[[u8; IMAGE_PIXELS]],
) -> Result<Vec<Vec<f32>>, String> {
    // In slices, yielding between them, so the page never stalls for the whole batch (this
    // also runs when weights are swapped in mid-training). Equal slices: the mean of their
    // means is the batch mean.
    let mut total: Vec<Vec<f32>> = Vec::new();
    for slice in images.chunks(DISTANCE_SLICE) {
        let part = engine
            .attention_distance(slice)
            .await
            .map_err(|e| e.to_string())?;
        if total.is_empty() {
            total = part;
        } else {
            for (sum, layer) in total.iter_mut().zip(part) {
                sum.iter_mut().zip(layer).for_each(|(s, v)| *s += v);
            }
        }
        web::sleep_ms(0).await;
    }
    let slices = images.len().div_ceil(DISTANCE_SLICE) as f32;
    total.iter_mut().flatten().for_each(|v| *v /= slices);
    Ok(total)
}

/// A visible message that can be dismissed; the app keeps working underneath. It floats over
/// the page rather than pushing it down, so it never moves the pad while someone draws.
#[component]
pub fn ErrorBanner(error: RwSignal<Option<String>>) -> impl IntoView {
    move || {
        error.get().map(|message| {
            view! {
                <div class="error toast" data-testid="error" role="alert">
                    <span>{message}</span>
                    <button on:click=move |_| error.set(None)>"Dismiss"</button>
                </div>
            }
        })
    }
}

/// Draw, classify live, and look inside: everything that needs a loaded model.
#[component]
pub fn Lab(
    engine: EngineSignal,
    /// Told where a classification failed and why, e.g. because the GPU was lost; answers
    /// whether the model now runs elsewhere, to classify the drawing again there.
    on_failure: Callback<(Backend, String), bool>,
    /// Told of any other problem, to show it (the model in use stays where it is).
    on_problem: Callback<String>,
    /// Mean attention distance over a batch of test digits, when known.
    #[prop(into)]
    batch_distance: Signal<Option<Vec<Vec<f32>>>>,
    /// Where a random test digit comes from.
    test_digits: TestDigits,
    /// A test digit shown in the draw panel instead of a drawing, set from anywhere.
    digit: RwSignal<Option<ShownDigit>>,
    /// The attention map shown large (a link may set it).
    map: RwSignal<MapChoice>,
    /// The image the model is given: the drawing, or a test digit (the training run probes
    /// it too).
    input: RwSignal<Option<Vec<u8>>>,
) -> impl IntoView {
    let Some(first) = engine.get_untracked() else {
        return view! { <p>"No model loaded."</p> }.into_any();
    };
    let insight = first.insight.clone();
    // Other weights may have fewer layers or heads than the map asks for.
    if let ModelInsight::Vit(config, _) = &insight
        && !map.get_untracked().fits(config.depth, config.heads)
    {
        map.set(MapChoice::Rollout);
    }

    let result = RwSignal::new(None::<Arc<Classification>>);
    let latencies = RwSignal::new(Vec::<f64>::new());
    // Every classification of a drawing so far (the latencies keep the last 200).
    let runs = RwSignal::new(0usize);
    // Also shown as `data-busy`, so tests know when the prediction has caught up.
    let in_flight = RwSignal::new(false);
    let pending = StoredValue::new(None::<(Vec<u8>, f64)>);

    // At most one inference in flight; while it runs only the newest drawing waits.
    let on_image = Callback::new(move |image: Option<Vec<u8>>| {
        input.set(image.clone());
        let Some(image) = image else {
            result.set(None);
            return;
        };
        let job = (image, web::now_ms());
        if in_flight.get_untracked() {
            pending.set_value(Some(job));
            return;
        }
        in_flight.set(true);
        spawn_local(async move {
            let mut next = Some(job);
            while let Some((image, asked_at)) = next {
                let Some(engine) = engine.get_untracked() else {
                    break;
                };
                let image: [u8; IMAGE_PIXELS] =
                    image.try_into().expect("the pad makes 28×28 images");
                match engine.classify(&image).await {
                    Ok(classification) if input.with_untracked(Option::is_some) => {
                        result.set(Some(Arc::new(classification)));
                        let took = web::now_ms() - asked_at;
                        runs.update(|n| *n += 1);
                        latencies.update(|l| {
                            l.push(took);
                            if l.len() > 200 {
                                l.remove(0);
                            }
                        });
                    }
                    Ok(_) => result.set(None),
                    Err(error) => {
                        let moved = on_failure.run((engine.backend, error.to_string()));
                        // Tried again where the model now runs, unless a newer drawing waits.
                        if moved && pending.with_value(Option::is_none) {
                            pending.set_value(Some((image.to_vec(), asked_at)));
                        }
                    }
                }
                next = pending.try_update_value(Option::take).flatten();
            }
            in_flight.set(false);
        });
    });

    // A test digit goes to the model as it is, where a drawing goes through preprocessing.
    Effect::new(move |_| {
        if let Some(shown) = digit.get() {
            on_image.run(Some(shown.image));
        }
    });
    // Drawing (or clearing) puts the pad's own image back.
    let from_pad = Callback::new(move |image: Option<Vec<u8>>| {
        if digit.with_untracked(Option::is_some) {
            digit.set(None);
        }
        on_image.run(image);
    });
    let random_digit = move |_| {
        spawn_local(async move {
            match test_digits.random().await {
                Ok(shown) => digit.set(Some(shown)),
                Err(message) => on_problem.run(format!("No test digit: {message}")),
            }
        })
    };
    let inside = match insight {
        ModelInsight::Vit(config, insight) => {
            let grid = config.grid_size();
            view! {
                <section class="card heatmaps">
                    <h2>"Where it looks"</h2>
                    <AttentionView result=result input=input grid=grid depth=config.depth heads=config.heads choice=map />
                </section>
                <section class="card wide">
                    <h2>"Inside the model"</h2>
                    <AnalysisView insight=Arc::new(insight) result=result batch_distance=batch_distance grid=grid patch_size=config.patch_size />
                </section>
            }
            .into_any()
        }
        ModelInsight::Cnn(insight) => view! {
            <section class="card wide">
                <h2>"Inside the CNN"</h2>
                <CnnView insight=insight />
            </section>
        }
        .into_any(),
    };
    view! {
        <div class="lab">
            <section class="card draw">
                <h2>"Draw a digit"</h2>
                <DrawPad on_image=from_pad shown=Signal::derive(move || digit.get().map(|d| d.image)) />
                <div class="buttons">
                    <button data-testid="random-test-digit" on:click=random_digit>"Random test digit"</button>
                </div>
                {move || digit.get().map(|d| view! {
                    <p class="caption" data-testid="shown-digit" data-label=d.label.to_string()>
                        {format!("{}, labelled {}: the model sees this 28×28 image as it is", d.origin, d.label)}
                    </p>
                })}
                <Latency latencies=latencies runs=runs />
            </section>
            <section class="card prediction" data-testid="prediction-card" data-busy=move || in_flight.get().to_string()>
                <h2>"Prediction"</h2>
                <Prediction result=result />
            </section>
            {inside}
        </div>
    }
    .into_any()
}

/// The predicted digit, large, and a bar per class.
#[component]
pub fn Prediction(#[prop(into)] result: Signal<Option<Arc<Classification>>>) -> impl IntoView {
    view! {
        <div class="digit" data-testid="prediction">
            {move || result.get().map(|r| r.predicted().to_string()).unwrap_or_else(|| "–".into())}
        </div>
        <ol class="bars">
            {(0..NUM_CLASSES)
                .map(|digit| {
                    let p = move || result.get().map(|r| r.probabilities[digit]).unwrap_or(0.0);
                    view! {
                        <li data-testid=format!("probability-{digit}") data-value=move || format!("{:.6}", p())>
                            <span class="label">{digit}</span>
                            <span class="bar" style:width=move || format!("{:.1}%", 100.0 * p())></span>
                            <span class="value">{move || format!("{:.1}%", 100.0 * p())}</span>
                        </li>
                    }
                })
                .collect_view()}
        </ol>
    }
}

/// p50 and p95 of drawing-to-prediction latency.
#[component]
fn Latency(latencies: RwSignal<Vec<f64>>, runs: RwSignal<usize>) -> impl IntoView {
    let text = move || {
        latencies.with(|l| {
            if l.is_empty() {
                return String::new();
            }
            let mut sorted = l.clone();
            sorted.sort_by(f64::total_cmp);
            let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
            format!(
                "latency p50 {:.1} ms · p95 {:.1} ms ({} runs)",
                at(0.5),
                at(0.95),
                sorted.len()
            )
        })
    };
    view! { <p class="latency" data-testid="latency" data-runs=move || runs.get().to_string()>{text}</p> }
}
