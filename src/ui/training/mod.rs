//! Training in the page: the plan, the controls, live charts and reports. The model trains in
//! a Web Worker ([`crate::web::TrainerWorker`]); this panel only sends commands and shows
//! what comes back.
//!
//! `report` draws the run's figures, `files` reads uploads and offers downloads; the run's
//! state is `crate::run_view::RunView`, held here in a Leptos store.

mod files;
mod report;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::model::Preset;
use reactive_stores::Store;

use crate::protocol::{
    Backend, DataProgress, FromTrainer, RunState, SavedSummary, ToTrainer, WeightsPurpose,
};
use crate::run_view::{Effect, Notice, RunView, RunViewStoreFields};
use crate::train::{CellDigits, History, StepReport, TestReport, TrainingPlan};
use crate::web::{TrainerWorker, saved_run};

use super::chart::{LineChart, Series};
use super::runs::{Interest, RunKeeper};
use super::{AttentionTimeline, ShownDigit};
use crate::analysis::MapChoice;
use crate::analysis::timeline::Timeline;
use crate::share::Experiment;
use files::{offer_download, on_file_chosen};
use report::{Counters, DataBar, TestView};

/// Weights handed to the draw panel, with a name for where they came from.
pub type WeightsOffer = (Vec<u8>, String);

/// The parts of the run's view the panel draws, each a memo of its own.
#[derive(Clone, Copy)]
struct Shown {
    state: Memo<RunState>,
    backend: Memo<Option<Backend>>,
    device_note: Memo<Option<String>>,
    workers: Memo<usize>,
    data: Memo<DataProgress>,
    samples: Memo<Vec<(Vec<u8>, u8)>>,
    history: Memo<History>,
    report: Memo<Option<StepReport>>,
    test: Memo<Option<TestReport>>,
    cell: Memo<Option<CellDigits>>,
    timeline: Memo<Timeline>,
    notices: Memo<Vec<Notice>>,
    failure: Memo<Option<String>>,
    saved: Memo<Option<Result<SavedSummary, String>>>,
}

/// The training panel.
#[component]
pub fn TrainingPanel(
    /// Takes weights into the draw panel (validated there; a bad file leaves the old model).
    on_weights: Callback<WeightsOffer>,
    /// Backend the page was asked for (`?backend=`), the default for training too; none
    /// times the two.
    preferred_backend: Option<Backend>,
    /// Puts a test digit into the draw panel.
    on_digit: Callback<ShownDigit>,
    /// The plan a link set, already checked.
    initial_plan: Option<TrainingPlan>,
    /// What a link to this experiment holds beside the plan: the map shown large and the
    /// model's address (none for a model without one, such as an upload).
    #[prop(into)]
    map: Signal<MapChoice>,
    #[prop(into)] model_url: Signal<Option<String>>,
    /// Keeps each run's record for the runs table.
    keeper: RunKeeper,
    /// The image the draw panel's model is given, probed by the run at each evaluation.
    #[prop(into)]
    drawing: Signal<Option<Vec<u8>>>,
) -> impl IntoView {
    let backend_choice = RwSignal::new(preferred_backend);
    let form = RwSignal::new(
        initial_plan
            .clone()
            .unwrap_or_else(|| TrainingPlan::in_page(Preset::Seed)),
    );
    // `None` once a field is edited: the plan is then custom.
    let preset = RwSignal::new(match initial_plan {
        None => Some(Preset::Seed),
        Some(plan) => Preset::ALL
            .into_iter()
            .find(|&preset| TrainingPlan::in_page(preset) == plan),
    });
    let share_href = move || {
        let query = Experiment::query(
            &form.get(),
            backend_choice.get(),
            map.get(),
            model_url.get().as_deref(),
        );
        format!("?{query}")
    };
    let run = Store::new(RunView::default());
    let worker = StoredValue::new_local(None::<TrainerWorker>);
    // Each message changes the store as a whole, which wakes every reader of it: each part of
    // the panel reads a memo of its own part instead, and redraws only when that part changed
    // (the samples, the confusion matrix and the notices not at every step report).
    let shown = Shown {
        state: Memo::new(move |_| run.state().get()),
        backend: Memo::new(move |_| run.backend().get()),
        device_note: Memo::new(move |_| run.device_note().get()),
        workers: Memo::new(move |_| run.workers().get()),
        data: Memo::new(move |_| run.data().get()),
        samples: Memo::new(move |_| run.samples().get()),
        history: Memo::new(move |_| run.history().get()),
        report: Memo::new(move |_| run.report().get()),
        test: Memo::new(move |_| run.test().get()),
        cell: Memo::new(move |_| run.cell().get()),
        timeline: Memo::new(move |_| run.timeline().get()),
        notices: Memo::new(move |_| run.notices().get()),
        failure: Memo::new(move |_| run.failure().get()),
        saved: Memo::new(move |_| run.saved().get()),
    };

    let refresh_saved =
        move || spawn_local(async move { run.saved().set(saved_run::saved_summary().await) });
    refresh_saved();
    let offer = move |bytes: Vec<u8>, name: String| {
        if let Err(message) = offer_download(&bytes, &name) {
            run.update(|view| view.notice(message, true));
        }
    };
    let follow = move |effect: Effect| match effect {
        Effect::None => {}
        Effect::UseWeights { bytes, source } => on_weights.run((bytes, source)),
        Effect::Download { bytes, name } => offer(bytes, name),
        Effect::RefreshSaved => refresh_saved(),
        Effect::KeepWeights { bytes } => keeper.keep_weights(bytes),
    };

    // To the worker if there is one; `send_with` below starts one first.
    let tell = move |message: &ToTrainer, bytes: Option<Vec<u8>>| {
        worker.with_value(|w| {
            if let Some(w) = w {
                w.send(message, bytes)
            }
        });
    };
    let tell_drawing = move || {
        let message = ToTrainer::Drawing {
            image: drawing.get_untracked(),
        };
        tell(&message, None);
    };
    let on_message = move |message: FromTrainer, bytes: Option<Vec<u8>>| {
        let interest = Interest::of(&message);
        if matches!(interest, Interest::Started(_)) {
            tell_drawing();
        }
        let mut effect = Effect::None;
        run.update(|view| effect = view.apply(message, bytes));
        if run.with_untracked(|view| keeper.after(interest, view)) {
            let keep = ToTrainer::ExportWeights {
                purpose: WeightsPurpose::Keep,
            };
            tell(&keep, None);
        }
        follow(effect);
    };

    // The worker is started on first use, so a visit that only draws never loads it.
    let send_with = move |message: ToTrainer, bytes: Option<Vec<u8>>| {
        if worker.with_value(Option::is_none) {
            let spawned = TrainerWorker::spawn(on_message, move |message| {
                // The worker's wasm is dead: nothing it holds can answer any more. Dropped
                // later, as this handler belongs to it.
                spawn_local(async move { worker.set_value(None) });
                let mut effect = Effect::None;
                run.update(|view| effect = view.worker_lost(&message.to_string()));
                follow(effect);
            });
            match spawned {
                Ok(spawned) => worker.set_value(Some(spawned)),
                Err(error) => {
                    run.failure().set(Some(error.to_string()));
                    return;
                }
            }
        }
        tell(&message, bytes);
    };
    let send = move |message: ToTrainer| send_with(message, None);
    // The drawing goes to a running worker half a second after it last changed, not at every
    // stroke.
    let drawing_timer = StoredValue::new_local(None::<gloo_timers::callback::Timeout>);
    leptos::prelude::Effect::new(move |_| {
        drawing.track();
        if worker.with_value(Option::is_some) {
            let timer = gloo_timers::callback::Timeout::new(500, tell_drawing);
            drawing_timer.set_value(Some(timer));
        }
    });
    let backend = move || backend_choice.get_untracked();
    let start = move |_| {
        let plan = form.get_untracked();
        if let Err(message) = plan.validate() {
            run.failure()
                .set(Some(format!("This plan cannot run: {message}")));
            return;
        }
        run.update(|view| {
            view.clear();
            view.data = DataProgress::default();
        });
        keeper.forget_current();
        send(ToTrainer::Start {
            plan,
            backend: backend(),
        });
    };
    let resume_saved = move |backend: Option<Backend>| {
        // A fresh worker: the old one may have died with its device.
        worker.set_value(None);
        run.update(RunView::clear);
        spawn_local(async move {
            let saved_plan = run.with_untracked(|view| {
                view.saved
                    .as_ref()
                    .and_then(|saved| saved.as_ref().ok())
                    .map(|saved| saved.plan.clone())
            });
            keeper.resume_current(saved_plan).await;
            let timeline = keeper.timeline();
            run.update(|view| view.timeline = timeline);
            send(ToTrainer::ResumeSaved { backend });
        });
    };
    // A run file saved by this page or by `vit train`: checked in the worker, where it runs.
    let resume_file = move |bytes: Vec<u8>| {
        worker.set_value(None);
        run.update(|view| {
            view.clear();
            view.data = DataProgress::default();
        });
        keeper.forget_current();
        send_with(ToTrainer::ResumeFile { backend: backend() }, Some(bytes));
    };
    let pause_or_resume = move |_| match run.state().get_untracked() {
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
        keeper.forget_current();
        run.update(RunView::reset);
    };
    let refused = move |why: String| run.update(|view| view.notice(why, true));
    let running = move || matches!(shown.state.get(), RunState::Running | RunState::Starting);
    let has_model = move || shown.state.get().has_model() && worker.with_value(Option::is_some);

    let set_field = move |apply: fn(&mut TrainingPlan, f64)| {
        move |ev: leptos::ev::Event| {
            if let Ok(value) = event_target_value(&ev).trim().parse::<f64>() {
                form.update(|plan| apply(plan, value));
                preset.set(None);
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
                <input
                    type="number"
                    step=step
                    min="0"
                    data-testid=format!("plan-{}", label.to_lowercase().replace(' ', "-"))
                    prop:value=value
                    on:change=set_field(apply)
                    prop:disabled=running
                />
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
                        prop:value=move || preset.get().map_or("custom", Preset::name)
                        prop:disabled=running
                        on:change=move |ev| {
                            let chosen = Preset::parse(&event_target_value(&ev));
                            if let Some(chosen) = chosen {
                                form.set(TrainingPlan::in_page(chosen));
                            }
                            preset.set(chosen);
                        }
                    >
                        <option value="seed">"seed (patch 7, 4×4 grid)"</option>
                        <option value="lab">"pretrained lab (patch 4, 7×7 grid)"</option>
                        <option value="cnn">"CNN (the ViT's size, no attention)"</option>
                        <option value="custom">"custom"</option>
                    </select>
                </label>
                {number("Depth", field(|p| p.config.vit().map_or_else(String::new, |c| c.depth.to_string())), "1", |p, v| if let Some(c) = p.config.vit_mut() { c.depth = v as usize })}
                {number("Dim", field(|p| p.config.vit().map_or_else(String::new, |c| c.dim.to_string())), "8", |p, v| if let Some(c) = p.config.vit_mut() { c.dim = v as usize })}
                {number("Heads", field(|p| p.config.vit().map_or_else(String::new, |c| c.heads.to_string())), "1", |p, v| if let Some(c) = p.config.vit_mut() { c.heads = v as usize })}
                {number("Patch", field(|p| p.config.vit().map_or_else(String::new, |c| c.patch_size.to_string())), "1", |p, v| if let Some(c) = p.config.vit_mut() { c.patch_size = v as usize })}
                {number("MLP", field(|p| p.config.vit().map_or_else(String::new, |c| c.mlp_dim.to_string())), "8", |p, v| if let Some(c) = p.config.vit_mut() { c.mlp_dim = v as usize })}
                {number("Learning rate", field(|p| p.lr.to_string()), "0.0001", |p, v| p.lr = v)}
                {number("Batch", field(|p| p.batch_size.to_string()), "1", |p, v| p.batch_size = v as usize)}
                {number("Epochs", field(|p| p.epochs.to_string()), "1", |p, v| p.epochs = v as usize)}
                {number("Training images", field(|p| p.train_limit.map_or_else(String::new, |n| n.to_string())), "1000", |p, v| p.train_limit = (v >= 1.0).then_some(v as usize))}
                <label>
                    <span>"Seed"</span>
                    <input
                        type="number"
                        step="1"
                        min="0"
                        data-testid="seed-field"
                        prop:value=field(|p| p.seed.to_string())
                        prop:disabled=running
                        on:change=move |ev| {
                            if let Ok(seed) = event_target_value(&ev).trim().parse::<u64>() {
                                form.update(|p| p.seed = seed);
                            }
                        }
                    />
                </label>
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
                        prop:value=move || backend_choice.get().map_or("auto", Backend::param)
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
                            "{params} parameters · {} · {}",
                            plan.config.vit().map_or_else(|| "CNN".to_string(), |c| format!("{} tokens", c.num_tokens())),
                            if plan.warmup_epochs.is_some() { "AdamW, warm-up + cosine" } else { "Adam, constant rate" }
                        )
                    }}
                </p>
            </div>
            <p class="share">
                <a data-testid="share-link" href=share_href>"Link to this experiment"</a>
                " — the plan with its seed, the device, the model and the map shown."
            </p>
            <div class="buttons">
                <button data-testid="train-button" on:click=start prop:disabled=running>"Train"</button>
                <button data-testid="pause-button" on:click=pause_or_resume prop:disabled=move || !has_model() || shown.state.get() == RunState::Finished>
                    {move || if shown.state.get() == RunState::Running { "Pause" } else { "Resume" }}
                </button>
                <button data-testid="stop-button" on:click=move |_| send(ToTrainer::Stop) prop:disabled=move || !running()>"Stop"</button>
                <button data-testid="reset-button" on:click=reset>"Reset"</button>
                {move || {
                    let saved = shown.saved.get()?.ok()?;
                    (!running() && worker.with_value(Option::is_none) || shown.state.get() == RunState::Failed)
                        .then(|| {
                            let label = format!("Resume saved run (step {} of {})", saved.step, saved.total_steps);
                            view! {
                                <button data-testid="resume-saved-button" on:click=move |_| resume_saved(backend())>{label}</button>
                                <button data-testid="resume-cpu-button" on:click=move |_| resume_saved(Some(Backend::Cpu))>"… on the CPU"</button>
                            }
                        })
                }}
                {move || {
                    let problem = shown.saved.get()?.err()?;
                    let discard = move |_| {
                        spawn_local(saved_run::forget_run());
                        run.saved().set(None);
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
                <span data-testid="run-state">{move || shown.state.get().label()}</span>
                {move || shown.backend.get().map(|b| format!(" on {}", b.label()))}
                {move || {
                    let workers = shown.workers.get();
                    (workers > 1).then(|| view! { <span data-testid="cpu-workers">{format!(", {workers} workers")}</span> })
                }}
                {move || shown.device_note.get().map(|n| view! { <span class="note">" — " {n}</span> })}
            </p>
            {move || shown.failure.get().map(|message| view! { <p class="error" data-testid="training-error" role="alert">{message}</p> })}
            <ul class="notices">
                {move || shown.notices.get().into_iter().map(|notice| view! { <li class:warning=notice.warning>{notice.message}</li> }).collect_view()}
            </ul>
            <DataBar data=shown.data.into() samples=shown.samples.into() />
            <Counters report=shown.report.into() test=shown.test.into() />
            <div class="charts">
                <LineChart
                    testid="loss-chart"
                    x_label="step"
                    series=Signal::derive(move || {
                        shown.history.with(|h| {
                            vec![
                                Series { label: "loss".into(), class: "raw", points: h.steps.iter().map(|p| (p.step as f64, p.loss as f64)).collect(), dots: false },
                                Series { label: "smoothed".into(), class: "smooth", points: h.steps.iter().map(|p| (p.step as f64, p.smoothed_loss as f64)).collect(), dots: false },
                            ]
                        })
                    })
                />
                <LineChart
                    testid="accuracy-chart"
                    x_label="step"
                    y_range=(0.0, 1.0)
                    series=Signal::derive(move || {
                        shown.history.with(|h| {
                            vec![
                                Series { label: "train (smoothed)".into(), class: "smooth", points: h.steps.iter().map(|p| (p.step as f64, p.accuracy as f64)).collect(), dots: false },
                                Series { label: "test".into(), class: "test", points: h.evals.iter().map(|p| (p.step as f64, p.accuracy as f64)).collect(), dots: true },
                            ]
                        })
                    })
                />
            </div>
            <h3>"Attention as it learns"</h3>
            <AttentionTimeline timeline=shown.timeline testid="attention-timeline" />
            <TestView
                test=shown.test.into()
                cell=shown.cell.into()
                on_cell=Callback::new(move |(label, predicted)| send(ToTrainer::CellDigits { label, predicted }))
                on_digit=on_digit
            />
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
                        on:change=on_file_chosen(
                            move |bytes, name| on_weights.run((bytes, format!("upload {name}"))),
                            refused,
                        )
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
                        on:change=on_file_chosen(move |bytes, _| resume_file(bytes), refused)
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
