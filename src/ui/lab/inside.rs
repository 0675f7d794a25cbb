//! Inside the model: where a ViT looks and what it learned, or what a CNN builds in.

use std::sync::Arc;

use leptos::prelude::*;

use super::analysis::AnalysisView;
use super::attention::AttentionView;
use super::classifier::Classifier;
use super::cnn_view::CnnView;
use super::explain::Explanations;
use super::explainer::Explainer;
use super::occlusion::Occlusion;
use crate::analysis::inference::ModelInsight;
use crate::ui::state::LabState;

#[component]
pub(super) fn Inside(insight: ModelInsight) -> impl IntoView {
    let lab = expect_context::<LabState>();
    let result = expect_context::<Classifier>().result;
    match insight {
        ModelInsight::Vit(config, insight) => {
            let grid = config.grid_size();
            provide_context(Explainer::new(lab));
            view! {
                <section class="card heatmaps">
                    <h2>"Where it looks"</h2>
                    <AttentionView result=result input=lab.input grid=grid depth=config.depth heads=config.heads choice=lab.map />
                </section>
                <section class="card">
                    <h2>"Beyond rollout"</h2>
                    <Explanations grid=grid depth=config.depth />
                </section>
                <section class="card wide">
                    <h2>"Patches hidden: ViT against CNN"</h2>
                    <Occlusion grid=grid />
                </section>
                <section class="card wide">
                    <h2>"Inside the model"</h2>
                    <AnalysisView insight=Arc::new(insight) result=result batch_distance=lab.batch_distance grid=grid patch_size=config.patch_size />
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
    }
}
