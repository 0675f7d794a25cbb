//! The plan form: a preset, or each of the plan's numbers, the seed, augmentation and the
//! device, with what the plan amounts to. Disabled while a run is under way.

use leptos::prelude::*;

use crate::model::Preset;
use crate::protocol::BackendKind;
use crate::train::TrainingPlan;
use crate::ui::state::{PlanChoice, TrainingControl};

#[component]
pub(super) fn PlanForm() -> impl IntoView {
    view! {
        <div class="plan">
            <PresetField />
            <PlanNumbers />
            <SeedField />
            <AugmentField />
            <DeviceField />
            <PlanCaption />
        </div>
    }
}

#[component]
fn PresetField() -> impl IntoView {
    let trainer = expect_context::<TrainingControl>();
    let PlanChoice { form, preset, .. } = trainer.plan;
    view! {
        <label>
            <span>"Preset"</span>
            <select
                prop:value=move || preset.get().map_or("custom", Preset::name)
                prop:disabled=move || trainer.running()
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
    }
}

/// The plan's numbers, each a field that makes the plan custom.
#[component]
fn PlanNumbers() -> impl IntoView {
    view! {
        <PlanNumber label="Depth" step="1" read={|p| p.config.vit().map_or_else(String::new, |c| c.depth.to_string())} apply={|p, v| if let Some(c) = p.config.vit_mut() { c.depth = v as usize }} />
        <PlanNumber label="Dim" step="8" read={|p| p.config.vit().map_or_else(String::new, |c| c.dim.to_string())} apply={|p, v| if let Some(c) = p.config.vit_mut() { c.dim = v as usize }} />
        <PlanNumber label="Heads" step="1" read={|p| p.config.vit().map_or_else(String::new, |c| c.heads.to_string())} apply={|p, v| if let Some(c) = p.config.vit_mut() { c.heads = v as usize }} />
        <PlanNumber label="Patch" step="1" read={|p| p.config.vit().map_or_else(String::new, |c| c.patch_size.to_string())} apply={|p, v| if let Some(c) = p.config.vit_mut() { c.patch_size = v as usize }} />
        <PlanNumber label="MLP" step="8" read={|p| p.config.vit().map_or_else(String::new, |c| c.mlp_dim.to_string())} apply={|p, v| if let Some(c) = p.config.vit_mut() { c.mlp_dim = v as usize }} />
        <PlanNumber label="Learning rate" step="0.0001" read={|p| p.lr.to_string()} apply={|p, v| p.lr = v} />
        <PlanNumber label="Batch" step="1" read={|p| p.batch_size.to_string()} apply={|p, v| p.batch_size = v as usize} />
        <PlanNumber label="Epochs" step="1" read={|p| p.epochs.to_string()} apply={|p, v| p.epochs = v as usize} />
        <PlanNumber label="Training images" step="1000" read={|p| p.train_limit.map_or_else(String::new, |n| n.to_string())} apply={|p, v| p.train_limit = (v >= 1.0).then_some(v as usize)} />
    }
}

#[component]
fn PlanNumber(
    label: &'static str,
    step: &'static str,
    read: fn(&TrainingPlan) -> String,
    apply: fn(&mut TrainingPlan, f64),
) -> impl IntoView {
    let trainer = expect_context::<TrainingControl>();
    let PlanChoice { form, preset, .. } = trainer.plan;
    let on_change = move |ev: leptos::ev::Event| {
        if let Ok(value) = event_target_value(&ev).trim().parse::<f64>() {
            form.update(|plan| apply(plan, value));
            preset.set(None);
        }
    };
    view! {
        <label>
            <span>{label}</span>
            <input
                type="number"
                step=step
                min="0"
                data-testid=format!("plan-{}", label.to_lowercase().replace(' ', "-"))
                prop:value=move || form.with(read)
                on:change=on_change
                prop:disabled=move || trainer.running()
            />
        </label>
    }
}

/// The seed leaves the plan's preset as it is: the same recipe, drawn again.
#[component]
fn SeedField() -> impl IntoView {
    let trainer = expect_context::<TrainingControl>();
    let form = trainer.plan.form;
    view! {
        <label>
            <span>"Seed"</span>
            <input
                type="number"
                step="1"
                min="0"
                data-testid="seed-field"
                prop:value=move || form.with(|p| p.seed.to_string())
                prop:disabled=move || trainer.running()
                on:change=move |ev| {
                    if let Ok(seed) = event_target_value(&ev).trim().parse::<u64>() {
                        form.update(|p| p.seed = seed);
                    }
                }
            />
        </label>
    }
}

#[component]
fn AugmentField() -> impl IntoView {
    let trainer = expect_context::<TrainingControl>();
    let form = trainer.plan.form;
    view! {
        <label class="check">
            <input
                type="checkbox"
                prop:checked=move || form.with(|p| p.augment)
                prop:disabled=move || trainer.running()
                on:change=move |ev| {
                    let on = event_target_checked(&ev);
                    form.update(|p| p.augment = on);
                }
            />
            <span>"Augmentation (±2 px, ±10°, ±10 %)"</span>
        </label>
    }
}

#[component]
fn DeviceField() -> impl IntoView {
    let trainer = expect_context::<TrainingControl>();
    let backend = trainer.plan.backend;
    view! {
        <label>
            <span>"Device"</span>
            <select
                prop:value=move || backend.get().map_or("auto", BackendKind::param)
                prop:disabled=move || trainer.running()
                on:change=move |ev| backend.set(BackendKind::parse(&event_target_value(&ev)))
            >
                <option value="auto">"The faster (timed)"</option>
                <option value="webgpu">"WebGPU"</option>
                <option value="cpu">"CPU (worker)"</option>
            </select>
        </label>
    }
}

/// The plan's size and recipe, in a line.
#[component]
fn PlanCaption() -> impl IntoView {
    let form = expect_context::<TrainingControl>().plan.form;
    view! {
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
    }
}
