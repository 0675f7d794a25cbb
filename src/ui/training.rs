//! Training in the page: the plan, the controls, live charts and reports. The model trains in
//! a Web Worker ([`crate::web::TrainerWorker`]); this panel only sends commands and shows
//! what comes back.

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use crate::data::NUM_CLASSES;
use crate::protocol::{
    Backend, DataProgress, FromTrainer, RunState, SavedSummary, ToTrainer, WeightsPurpose,
};
use crate::train::{History, StepReport, TestReport, TrainingPlan};
use crate::web::{self, TrainerWorker, saved_run};

use super::chart::{LineChart, Series};
use super::{HeatCanvas, Palette};

/// Weights handed to the draw panel, with a name for where they came from.
pub type WeightsOffer = (Vec<u8>, String);

/// Epochs the page proposes: a first look in minutes, not the full recipe.
const PAGE_EPOCHS: usize = 3;

/// The preset as the page offers it: fewer epochs, and frequent small evaluations so the test
/// curve moves while you watch.
fn page_plan(name: &str) -> TrainingPlan {
    TrainingPlan {
        epochs: PAGE_EPOCHS,
        eval_every: 100,
        eval_images: 1000,
        ..TrainingPlan::preset(name).unwrap_or_else(TrainingPlan::seed)
    }
}

fn clock(seconds: f64) -> String {
    if !seconds.is_finite() {
        return "–".into();
    }
    let total = seconds.round() as u64;
    format!("{}:{:02}", total / 60, total % 60)
}

/// Everything the panel shows of a run.
#[derive(Clone, Copy)]
struct RunView {
    state: RwSignal<RunState>,
    backend: RwSignal<Option<Backend>>,
    device_note: RwSignal<Option<String>>,
    data: RwSignal<DataProgress>,
    samples: RwSignal<Vec<(Vec<u8>, u8)>>,
    history: RwSignal<History>,
    report: RwSignal<Option<StepReport>>,
    test: RwSignal<Option<TestReport>>,
    notices: RwSignal<Vec<(String, bool)>>,
    failure: RwSignal<Option<String>>,
    /// The run saved in this browser, or why it cannot be resumed.
    saved: RwSignal<Option<Result<SavedSummary, String>>>,
}

impl RunView {
    fn new() -> Self {
        Self {
            state: RwSignal::new(RunState::Idle),
            backend: RwSignal::new(None),
            device_note: RwSignal::new(None),
            data: RwSignal::new(DataProgress::default()),
            samples: RwSignal::new(Vec::new()),
            history: RwSignal::new(History::default()),
            report: RwSignal::new(None),
            test: RwSignal::new(None),
            notices: RwSignal::new(Vec::new()),
            failure: RwSignal::new(None),
            saved: RwSignal::new(None),
        }
    }

    fn clear(&self) {
        self.history.set(History::default());
        self.report.set(None);
        self.test.set(None);
        self.failure.set(None);
        self.notices.set(Vec::new());
    }

    fn notice(&self, message: String, warning: bool) {
        self.notices.update(|n| {
            n.push((message, warning));
            if n.len() > 4 {
                n.remove(0);
            }
        });
    }
}

/// The training panel.
#[component]
pub fn TrainingPanel(
    /// Takes weights into the draw panel (validated there; a bad file leaves the old model).
    on_weights: Callback<WeightsOffer>,
    /// Backend the page was asked for (`?backend=`), the default for training too; none
    /// times the two.
    preferred_backend: Option<Backend>,
) -> impl IntoView {
    let form = RwSignal::new(page_plan("seed"));
    let preset = RwSignal::new("seed".to_string());
    let backend_choice = RwSignal::new(preferred_backend);
    let run = RunView::new();
    let worker = StoredValue::new_local(None::<TrainerWorker>);

    spawn_local(async move { run.saved.set(saved_run::saved_summary().await) });

    let on_message = move |message: FromTrainer, bytes: Option<Vec<u8>>| match message {
        FromTrainer::Ready => {}
        FromTrainer::Saved { summary } => run.saved.set(summary),
        FromTrainer::Started {
            backend,
            note,
            plan: _,
            history,
        } => {
            run.backend.set(Some(backend));
            run.device_note.set(note);
            run.history.set(history);
            // Also sent after a NaN rolled the run back: the last report is not its state.
            run.report.set(None);
        }
        FromTrainer::State { state } => {
            run.state.set(state);
            if matches!(
                state,
                RunState::Paused | RunState::Stopped | RunState::Finished
            ) {
                spawn_local(async move { run.saved.set(saved_run::saved_summary().await) });
            }
        }
        FromTrainer::Data(progress) => run.data.set(progress),
        FromTrainer::Samples { images, labels } => {
            run.samples.set(images.into_iter().zip(labels).collect())
        }
        FromTrainer::Notice { message, warning } => run.notice(message, warning),
        FromTrainer::Steps { points, report } => {
            run.history
                .update(|h| points.into_iter().for_each(|p| h.push_step(p)));
            run.report.set(Some(report));
        }
        FromTrainer::Test(report) => {
            run.history.update(|h| h.push_eval(report.point));
            run.test.set(Some(report));
        }
        FromTrainer::Weights { purpose } => {
            let Some(bytes) = bytes else { return };
            // The history, not the last report: after a NaN the model went back to a save.
            let step = run
                .history
                .with_untracked(|h| h.steps.last().map_or(0, |p| p.step));
            match purpose {
                WeightsPurpose::Use => {
                    on_weights.run((bytes, format!("training run, step {step}")))
                }
                WeightsPurpose::Download => {
                    if let Err(message) =
                        offer_download(&bytes, &format!("vitlab-step-{step}.safetensors"))
                    {
                        run.notice(message, true);
                    }
                }
            }
        }
        FromTrainer::RunFile { step } => {
            let Some(bytes) = bytes else { return };
            if let Err(message) = offer_download(&bytes, &format!("vitlab-run-step-{step}.ckpt")) {
                run.notice(message, true);
            }
        }
        FromTrainer::Failed { message } => run.failure.set(Some(message)),
    };

    // The worker is started on first use, so a visit that only draws never loads it.
    let send_with = move |message: ToTrainer, bytes: Option<Vec<u8>>| {
        if worker.with_value(Option::is_none) {
            let spawned = TrainerWorker::spawn(on_message, move |message| {
                // The worker's wasm is dead: nothing it holds can answer any more. Dropped
                // later, as this handler belongs to it.
                spawn_local(async move { worker.set_value(None) });
                run.state.set(RunState::Failed);
                run.failure.set(Some(format!(
                    "The training worker stopped: {message}. Continue from the last save, on the CPU if the GPU was lost."
                )));
                spawn_local(async move { run.saved.set(saved_run::saved_summary().await) });
            });
            match spawned {
                Ok(spawned) => worker.set_value(Some(spawned)),
                Err(message) => {
                    run.failure.set(Some(message));
                    return;
                }
            }
        }
        worker.with_value(|w| {
            if let Some(w) = w {
                w.send(&message, bytes)
            }
        });
    };
    let send = move |message: ToTrainer| send_with(message, None);
    let backend = move || backend_choice.get_untracked();
    let start = move |_| {
        let plan = form.get_untracked();
        if let Err(message) = plan.validate() {
            run.failure
                .set(Some(format!("This plan cannot run: {message}")));
            return;
        }
        run.clear();
        run.data.set(DataProgress::default());
        send(ToTrainer::Start {
            plan,
            backend: backend(),
        });
    };
    let resume_saved = move |backend: Option<Backend>| {
        // A fresh worker: the old one may have died with its device.
        worker.set_value(None);
        run.clear();
        send(ToTrainer::ResumeSaved { backend });
    };
    // A run file saved by this page or by `vit train`: checked in the worker, where it runs.
    let resume_file = move |bytes: Vec<u8>| {
        worker.set_value(None);
        run.clear();
        run.data.set(DataProgress::default());
        send_with(ToTrainer::ResumeFile { backend: backend() }, Some(bytes));
    };
    let pause_or_resume = move |_| match run.state.get_untracked() {
        RunState::Running => send(ToTrainer::Pause),
        _ => send(ToTrainer::Resume),
    };
    let reset = move |_| {
        if worker.with_value(Option::is_some) {
            send(ToTrainer::Reset);
        } else {
            // No worker to tell: just forget what this browser saved.
            spawn_local(saved_run::forget_run());
        }
        run.clear();
        run.saved.set(None);
        run.samples.set(Vec::new());
        run.data.set(DataProgress::default());
    };
    let running = move || matches!(run.state.get(), RunState::Running | RunState::Starting);
    let has_model = move || run.state.get().has_model() && worker.with_value(Option::is_some);

    let set_field = move |apply: fn(&mut TrainingPlan, f64)| {
        move |ev: leptos::ev::Event| {
            if let Ok(value) = event_target_value(&ev).trim().parse::<f64>() {
                form.update(|plan| apply(plan, value));
                preset.set("custom".into());
            }
        }
    };
    let number = move |label: &'static str,
                       value: Signal<String>,
                       step: &'static str,
                       apply: fn(&mut TrainingPlan, f64)| {
        view! {
            <label>
                <span>{label}</span>
                <input type="number" step=step min="0" prop:value=value on:change=set_field(apply) prop:disabled=running />
            </label>
        }
    };
    let field = move |read: fn(&TrainingPlan) -> String| Signal::derive(move || form.with(read));

    view! {
        <section class="card training" data-testid="training-panel">
            <h2>"Train it yourself"</h2>
            <div class="plan">
                <label>
                    <span>"Preset"</span>
                    <select
                        prop:value=move || preset.get()
                        prop:disabled=running
                        on:change=move |ev| {
                            let name = event_target_value(&ev);
                            if name != "custom" {
                                form.set(page_plan(&name));
                            }
                            preset.set(name);
                        }
                    >
                        <option value="seed">"seed (patch 7, 4×4 grid)"</option>
                        <option value="lab">"pretrained lab (patch 4, 7×7 grid)"</option>
                        <option value="custom">"custom"</option>
                    </select>
                </label>
                {number("Depth", field(|p| p.config.depth.to_string()), "1", |p, v| p.config.depth = v as usize)}
                {number("Dim", field(|p| p.config.dim.to_string()), "8", |p, v| p.config.dim = v as usize)}
                {number("Heads", field(|p| p.config.heads.to_string()), "1", |p, v| p.config.heads = v as usize)}
                {number("Patch", field(|p| p.config.patch_size.to_string()), "1", |p, v| p.config.patch_size = v as usize)}
                {number("MLP", field(|p| p.config.mlp_dim.to_string()), "8", |p, v| p.config.mlp_dim = v as usize)}
                {number("Learning rate", field(|p| p.lr.to_string()), "0.0001", |p, v| p.lr = v)}
                {number("Batch", field(|p| p.batch_size.to_string()), "1", |p, v| p.batch_size = v as usize)}
                {number("Epochs", field(|p| p.epochs.to_string()), "1", |p, v| p.epochs = v as usize)}
                <label class="check">
                    <input
                        type="checkbox"
                        prop:checked=move || form.with(|p| p.augment)
                        prop:disabled=running
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            form.update(|p| p.augment = on);
                        }
                    />
                    <span>"Augmentation (±2 px, ±10°, ±10 %)"</span>
                </label>
                <label>
                    <span>"Device"</span>
                    <select
                        prop:value=move || backend_choice.get().map_or("auto", |b| match b { Backend::Cpu => "cpu", Backend::WebGpu => "webgpu" })
                        prop:disabled=running
                        on:change=move |ev| backend_choice.set(Backend::parse(&event_target_value(&ev)))
                    >
                        <option value="auto">"The faster (timed)"</option>
                        <option value="webgpu">"WebGPU"</option>
                        <option value="cpu">"CPU (worker)"</option>
                    </select>
                </label>
                <p class="caption">
                    {move || {
                        let plan = form.get();
                        let params = plan.config.num_params();
                        format!(
                            "{params} parameters · {} tokens · {}",
                            plan.config.num_tokens(),
                            if plan.warmup_epochs.is_some() { "AdamW, warm-up + cosine" } else { "Adam, constant rate" }
                        )
                    }}
                </p>
            </div>
            <div class="buttons">
                <button data-testid="train-button" on:click=start prop:disabled=running>"Train"</button>
                <button data-testid="pause-button" on:click=pause_or_resume prop:disabled=move || !has_model() || run.state.get() == RunState::Finished>
                    {move || if run.state.get() == RunState::Running { "Pause" } else { "Resume" }}
                </button>
                <button data-testid="stop-button" on:click=move |_| send(ToTrainer::Stop) prop:disabled=move || !running()>"Stop"</button>
                <button data-testid="reset-button" on:click=reset>"Reset"</button>
                {move || {
                    let saved = run.saved.get()?.ok()?;
                    (!running() && worker.with_value(Option::is_none) || run.state.get() == RunState::Failed)
                        .then(|| {
                            let label = format!("Resume saved run (step {} of {})", saved.step, saved.total_steps);
                            view! {
                                <button data-testid="resume-saved-button" on:click=move |_| resume_saved(backend())>{label}</button>
                                <button data-testid="resume-cpu-button" on:click=move |_| resume_saved(Some(Backend::Cpu))>"… on the CPU"</button>
                            }
                        })
                }}
                {move || {
                    let problem = run.saved.get()?.err()?;
                    let discard = move |_| {
                        spawn_local(saved_run::forget_run());
                        run.saved.set(None);
                    };
                    Some(view! {
                        <span class="error" data-testid="saved-run-problem" role="alert">
                            "The run saved in this browser cannot be resumed: " {problem} " "
                        </span>
                        <button data-testid="discard-saved-button" on:click=discard>"Discard it"</button>
                    })
                }}
            </div>
            <p class="run-state">
                <span data-testid="run-state">{move || run.state.get().label()}</span>
                {move || run.backend.get().map(|b| format!(" on {}", b.label()))}
                {move || run.device_note.get().map(|n| view! { <span class="note">" — " {n}</span> })}
            </p>
            {move || run.failure.get().map(|message| view! { <p class="error" data-testid="training-error" role="alert">{message}</p> })}
            <ul class="notices">
                {move || run.notices.get().into_iter().map(|(message, warning)| view! { <li class:warning=warning>{message}</li> }).collect_view()}
            </ul>
            <DataBar data=run.data samples=run.samples />
            <Counters report=run.report test=run.test />
            <div class="charts">
                <LineChart
                    testid="loss-chart"
                    x_label="step"
                    series=Signal::derive(move || {
                        run.history.with(|h| {
                            vec![
                                Series { label: "loss", class: "raw", points: h.steps.iter().map(|p| (p.step as f64, p.loss as f64)).collect(), dots: false },
                                Series { label: "smoothed", class: "smooth", points: h.steps.iter().map(|p| (p.step as f64, p.smoothed_loss as f64)).collect(), dots: false },
                            ]
                        })
                    })
                />
                <LineChart
                    testid="accuracy-chart"
                    x_label="step"
                    y_range=(0.0, 1.0)
                    series=Signal::derive(move || {
                        run.history.with(|h| {
                            vec![
                                Series { label: "train (smoothed)", class: "smooth", points: h.steps.iter().map(|p| (p.step as f64, p.accuracy as f64)).collect(), dots: false },
                                Series { label: "test", class: "test", points: h.evals.iter().map(|p| (p.step as f64, p.accuracy as f64)).collect(), dots: true },
                            ]
                        })
                    })
                />
            </div>
            <TestView test=run.test />
            <div class="buttons weights">
                <button data-testid="use-weights-button" prop:disabled=move || !has_model() on:click=move |_| send(ToTrainer::ExportWeights { purpose: WeightsPurpose::Use })>
                    "Use these weights"
                </button>
                <button data-testid="weights-download" prop:disabled=move || !has_model() on:click=move |_| send(ToTrainer::ExportWeights { purpose: WeightsPurpose::Download })>
                    "Download (.safetensors)"
                </button>
                <label class="upload">
                    <span>"Load weights: "</span>
                    <input
                        type="file"
                        accept=".safetensors"
                        data-testid="weights-upload"
                        on:change=move |ev| {
                            let input: web_sys::HtmlInputElement = event_target(&ev);
                            let Some(file) = input.files().and_then(|files| files.get(0)) else { return };
                            input.set_value("");
                            spawn_local(async move {
                                let name = file.name();
                                match read_file(&file).await {
                                    Ok(bytes) => on_weights.run((bytes, format!("upload {name}"))),
                                    Err(message) => run.notice(format!("{name}: {message}"), true),
                                }
                            });
                        }
                    />
                </label>
            </div>
            <div class="buttons run-file">
                <button data-testid="run-download" prop:disabled=move || !has_model() on:click=move |_| send(ToTrainer::ExportRun)>
                    "Save the run (.ckpt)"
                </button>
                <label class="upload">
                    <span>"Continue a run: "</span>
                    <input
                        type="file"
                        accept=".ckpt"
                        data-testid="run-upload"
                        prop:disabled=running
                        on:change=move |ev| {
                            let input: web_sys::HtmlInputElement = event_target(&ev);
                            let Some(file) = input.files().and_then(|files| files.get(0)) else { return };
                            input.set_value("");
                            spawn_local(async move {
                                match read_file(&file).await {
                                    Ok(bytes) => resume_file(bytes),
                                    Err(message) => run.notice(format!("{}: {message}", file.name()), true),
                                }
                            });
                        }
                    />
                </label>
            </div>
            <p class="caption">
                "Weights are safetensors with the seed's PyTorch names and the config in the metadata: "
                "load them with the seed's code, or load a file saved by it here. "
                "A run file adds AdamW's moments and the run's state: "
                "`vit train --resume-from FILE` continues it on the command line, and this page continues one `vit train` wrote."
            </p>
        </section>
    }
}

/// Reads an upload, held to the size cap a fetched file has: a file of gigabytes is refused
/// before a byte of it is copied into the page.
async fn read_file(file: &web_sys::File) -> Result<Vec<u8>, String> {
    let cap = web::MAX_FETCH_BYTES;
    if file.size() > cap as f64 {
        return Err(format!(
            "the file is {} MB, larger than the {} MB this page reads",
            (file.size() / (1u64 << 20) as f64).round(),
            cap >> 20
        ));
    }
    let buffer = wasm_bindgen_futures::JsFuture::from(file.array_buffer())
        .await
        .map_err(web::describe)?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// Hands `bytes` to the browser as a downloaded file.
fn offer_download(bytes: &[u8], name: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type("application/octet-stream");
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options)
        .map_err(web::describe)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(web::describe)?;
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let anchor: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(web::describe)?
        .unchecked_into();
    anchor.set_href(&url);
    anchor.set_download(name);
    anchor.click();
    // The download has its own reference now.
    let _ = web_sys::Url::revoke_object_url(&url);
    Ok(())
}

/// Download progress and a few of the digits that arrived.
#[component]
fn DataBar(data: RwSignal<DataProgress>, samples: RwSignal<Vec<(Vec<u8>, u8)>>) -> impl IntoView {
    view! {
        <div class="data">
            <progress
                data-testid="data-progress"
                max="1"
                prop:value=move || data.get().fraction()
                data-value=move || format!("{:.4}", data.get().fraction())
            ></progress>
            <span class="caption">
                {move || {
                    let d = data.get();
                    if d.total_chunks == 0 {
                        return "MNIST is fetched when training starts".to_string();
                    }
                    format!(
                        "data: {} / {} chunks, {:.1} / {:.1} MB, {} / {} images{}",
                        d.chunks,
                        d.total_chunks,
                        d.bytes as f64 / 1e6,
                        d.total_bytes as f64 / 1e6,
                        d.images,
                        d.total_images,
                        if d.cached_chunks > 0 { format!(" ({} from the browser cache)", d.cached_chunks) } else { String::new() }
                    )
                }}
            </span>
            <div class="samples" data-testid="samples">
                {move || {
                    samples
                        .get()
                        .into_iter()
                        .map(|(image, label)| {
                            let values: Vec<f32> = image.iter().map(|&p| p as f32).collect();
                            view! {
                                <figure>
                                    <HeatCanvas values=Signal::stored(values) grid=28 size=28 palette=Palette::Grey />
                                    <figcaption>{label}</figcaption>
                                </figure>
                            }
                        })
                        .collect_view()
                }}
            </div>
        </div>
    }
}

/// Step, epoch, speed, time, loss and accuracy as numbers.
#[component]
fn Counters(
    report: RwSignal<Option<StepReport>>,
    test: RwSignal<Option<TestReport>>,
) -> impl IntoView {
    let with = move |f: fn(&StepReport) -> String| {
        move || report.with(|r| r.as_ref().map(f).unwrap_or_else(|| "–".into()))
    };
    view! {
        <dl class="counters">
            <div><dt>"step"</dt><dd><span data-testid="training-step">{move || report.with(|r| r.as_ref().map_or(0, |r| r.point.step))}</span>{with(|r| format!(" / {}", r.total_steps))}</dd></div>
            <div><dt>"epoch"</dt><dd data-testid="training-epoch">{with(|r| format!("{} / {}", r.epoch, r.epochs))}</dd></div>
            <div><dt>"loss (smoothed)"</dt><dd data-testid="train-loss">{with(|r| format!("{:.4}", r.point.smoothed_loss))}</dd></div>
            <div><dt>"train accuracy"</dt><dd>{with(|r| format!("{:.1}%", 100.0 * r.point.accuracy))}</dd></div>
            <div><dt>"test accuracy"</dt><dd data-testid="test-accuracy">{move || test.with(|t| t.as_ref().map(|t| format!("{:.2}%", 100.0 * t.point.accuracy)).unwrap_or_else(|| "–".into()))}</dd></div>
            <div><dt>"images/s"</dt><dd data-testid="images-per-second">{with(|r| format!("{:.0}", r.images_per_second))}</dd></div>
            <div><dt>"elapsed"</dt><dd>{with(|r| clock(r.seconds))}</dd></div>
            <div><dt>"left"</dt><dd>{with(|r| clock(r.seconds_left))}</dd></div>
            <div><dt>"learning rate"</dt><dd>{with(|r| format!("{:.2e}", r.lr))}</dd></div>
        </dl>
    }
}

/// The latest evaluation: confusion matrix and misclassified digits.
#[component]
fn TestView(test: RwSignal<Option<TestReport>>) -> impl IntoView {
    move || {
        test.get().map(|report| {
            let max = report
                .confusion
                .iter()
                .enumerate()
                .flat_map(|(i, row)| row.iter().enumerate().filter(move |(j, _)| *j != i).map(|(_, &c)| c))
                .max()
                .unwrap_or(0)
                .max(1);
            view! {
                <div class="test-report">
                    <div>
                        <h3>{format!("Confusion on {} test digits (step {})", report.examples, report.point.step)}</h3>
                        <table class="confusion" data-testid="confusion-matrix">
                            <tr><th>"true ↓ / predicted →"</th>{(0..NUM_CLASSES).map(|d| view! { <th>{d}</th> }).collect_view()}</tr>
                            {report
                                .confusion
                                .iter()
                                .enumerate()
                                .map(|(label, row)| {
                                    view! {
                                        <tr>
                                            <th>{label}</th>
                                            {row
                                                .iter()
                                                .enumerate()
                                                .map(|(guess, &count)| {
                                                    let shade = if guess == label { 0.0 } else { count as f64 / max as f64 };
                                                    view! {
                                                        <td class:diagonal=guess == label style:background=format!("rgba(224,112,32,{shade:.2})")>{count}</td>
                                                    }
                                                })
                                                .collect_view()}
                                        </tr>
                                    }
                                })
                                .collect_view()}
                        </table>
                    </div>
                    <div>
                        <h3>"Misclassified"</h3>
                        <div class="samples mistakes" data-testid="mistakes">
                            {report
                                .mistakes
                                .iter()
                                .map(|mistake| {
                                    let values: Vec<f32> = mistake.image.iter().map(|&p| p as f32).collect();
                                    view! {
                                        <figure>
                                            <HeatCanvas values=Signal::stored(values) grid=28 size=42 palette=Palette::Grey />
                                            <figcaption>{format!("{} → {}", mistake.label, mistake.predicted)}</figcaption>
                                        </figure>
                                    }
                                })
                                .collect_view()}
                        </div>
                    </div>
                </div>
            }
        })
    }
}
