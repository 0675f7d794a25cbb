//! ViT against CNN: accuracy against training-set size, and receptive field against attention distance.

use leptos::html::Section;
use leptos::prelude::*;

use crate::analysis::data_scaling::{self, ScalingPoint};
use crate::model::{Architecture, CnnConfig};
use crate::place::Part;
use crate::run_record::RunRecord;
use crate::ui::state::{AppState, BatchDistance};
use crate::ui::widgets::{LineChart, Series, on_first_sight};

/// The full training split, for a run that took all of it.
const TRAIN_SPLIT: usize = 60_000;

/// Each architecture's finished runs in the runs table, by training images.
fn runs_here(records: &[RunRecord]) -> Vec<Series> {
    [Architecture::Vit, Architecture::Cnn]
        .into_iter()
        .filter_map(|model| {
            let mut points: Vec<(f64, f64)> = records
                .iter()
                .filter(|r| r.plan.config.architecture() == model)
                .filter(|r| r.total_steps > 0 && r.step >= r.total_steps)
                // A fine-tuning starts from a trained model: not a point of this curve.
                .filter(|r| !r.fine_tunes())
                .filter_map(|r| {
                    let images = r.plan.train_images(TRAIN_SPLIT) as f64;
                    Some((images.log10(), 100.0 * f64::from(r.last_test?)))
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            (!points.is_empty()).then(|| Series {
                label: format!("{} runs here", model.name()),
                class: match model {
                    Architecture::Vit => "vit here",
                    Architecture::Cnn => "cnn here",
                },
                points,
                dots: true,
            })
        })
        .collect()
}

/// The paper's central argument, on MNIST: a CNN builds in locality and translation
/// equivariance where a ViT must learn them, so it should lead on little data. Test accuracy
/// against training-set size for the two (`scripts/data-scaling.sh`), and the CNN's fixed
/// receptive fields against the ViT's learned attention distance, layer by layer.
#[component]
pub fn InductiveBias() -> impl IntoView {
    let points = match data_scaling::points(data_scaling::SHIPPED) {
        Ok(points) => points,
        Err(error) => return view! { <p class="error">{error.to_string()}</p> }.into_any(),
    };
    view! {
        <section class="card wide" data-testid="inductive-bias" id=Part::VitAgainstCnn.slug() tabindex="-1">
            <h2>"ViT against CNN"</h2>
            <div class="analysis">
                <DataScaling points=points />
                <ReceptiveFieldAgainstDistance />
            </div>
        </section>
    }
    .into_any()
}

/// Test accuracy against training-set size: the shipped figures, and the runs finished here.
#[component]
fn DataScaling(points: Vec<ScalingPoint>) -> impl IntoView {
    // The runs table: its finished runs join the chart as points of their own.
    let records = expect_context::<AppState>().keeper.records;
    let line = |model: Architecture, points: &[ScalingPoint]| Series {
        label: format!("{} test accuracy %", model.name()),
        class: match model {
            Architecture::Vit => "vit",
            Architecture::Cnn => "cnn",
        },
        points: points
            .iter()
            .filter(|p| p.model == model)
            .map(|p| ((p.images as f64).log10(), 100.0 * p.test_accuracy))
            .collect(),
        dots: true,
    };
    let shipped = [
        line(Architecture::Vit, &points),
        line(Architecture::Cnn, &points),
    ];
    let scaling = Signal::derive(move || {
        let mut all = shipped.to_vec();
        all.extend(records.with(|records| runs_here(records)));
        all
    });
    let verdict = match data_scaling::crossing(&points) {
        _ if points.is_empty() => "No figures are shipped yet.".to_string(),
        Some(images) => format!(
            "From {images} training images on, the ViT is at least as accurate as the CNN."
        ),
        None => "The CNN stays ahead at every size measured: MNIST's 60,000 digits are still \"small data\" for a ViT, which the paper saw overtake CNNs only past ~100 million images (JFT-300M)."
            .to_string(),
    };
    let budget = points.first().map_or(0, |p| p.budget);
    let mut sizes: Vec<usize> = points.iter().map(|p| p.images).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let row = |model: Architecture| {
        let cells = sizes
            .iter()
            .map(|&n| {
                let cell = points
                    .iter()
                    .find(|p| p.model == model && p.images == n)
                    .map(|p| format!("{:.2} %", 100.0 * p.test_accuracy))
                    .unwrap_or_default();
                view! { <td>{cell}</td> }
            })
            .collect_view();
        view! { <tr><th>{model.name()}</th>{cells}</tr> }
    };
    let header = sizes
        .iter()
        .map(|n| view! { <th>{n.to_string()}</th> })
        .collect_view();

    view! {
        <section>
            <h3>"Accuracy against training-set size"</h3>
            <details class="why">
                <summary>"How it was measured, and adding your own points"</summary>
                <p class="hint">{format!("The seed ViT (204,810 parameters) and a CNN of its size (204,330), each run seeing {budget} training images ({} epochs of 1,000 digits, {} of 60,000) with one recipe for both; the test set scored once per run.", budget / 1000, budget as f64 / 60_000.0)}</p>
                <p class="hint">"Your own points: set the training form's \"Training images\" (1,000, say), train either preset here, and each finished run joins the chart (scored on the page's 1,000 test digits, after the epochs you chose)."</p>
                <p class="hint">"Measured with "<code>"scripts/data-scaling.sh"</code>" (pretrained/README.md has the commands and the machine)."</p>
            </details>
            <LineChart series=scaling y_range=(90.0, 100.0) x_label="training images (log₁₀: 3 = 1,000, 4.78 = 60,000)" testid="data-scaling-chart" />
            <table class="scaling-table" data-testid="data-scaling-table">
                <tr><th>"images"</th>{header}</tr>
                {row(Architecture::Vit)}
                {row(Architecture::Cnn)}
            </table>
            <p class="caption" data-testid="data-scaling-verdict">{verdict}</p>
        </section>
    }
}

/// What the CNN sees, fixed by its architecture, against how far the loaded ViT's heads
/// reach over test digits, if known.
#[component]
fn ReceptiveFieldAgainstDistance() -> impl IntoView {
    let distance = expect_context::<BatchDistance>();
    let batch_distance = distance.distance;
    let section = NodeRef::<Section>::new();
    on_first_sight(section, Callback::new(move |()| distance.want()));
    let fields = CnnConfig::seed().receptive_fields();
    let depth_series = Signal::derive(move || {
        let cnn = Series {
            label: "CNN receptive field (px)".into(),
            class: "cnn",
            points: fields
                .iter()
                .enumerate()
                .map(|(l, &f)| ((l + 1) as f64, f as f64))
                .collect(),
            dots: true,
        };
        let mut all = vec![cnn];
        if let Some(distance) = batch_distance.get() {
            all.push(Series {
                label: "ViT mean attention distance (px)".into(),
                class: "vit",
                points: distance
                    .iter()
                    .enumerate()
                    .map(|(l, heads)| {
                        let mean = heads.iter().sum::<f32>() / heads.len().max(1) as f32;
                        ((l + 1) as f64, f64::from(mean))
                    })
                    .collect(),
                dots: true,
            });
        }
        all
    });
    view! {
        <section node_ref=section>
            <h3>"Receptive field against attention distance"</h3>
            <p class="hint">"What the CNN sees is fixed by its architecture and grows only with depth; how far the ViT's heads reach is learned, and some look across the whole digit from the first layer (Fig. 7, right: the paper likens attention distance to receptive field size)."</p>
            <LineChart series=depth_series x_label="layer" testid="receptive-field-chart" />
        </section>
    }
}
