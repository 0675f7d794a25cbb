//! Inside the model: where a ViT looks (the heatmap card, beside the pad) and what it learned
//! (the wide cards below), or what a CNN builds in. The heatmap card is there from the first
//! paint, at the shipped model's shape until a model is in, and is rebuilt only when a model
//! of another shape comes in, so nothing on the first screen moves when the model arrives.

use std::sync::Arc;

use leptos::html::Section;
use leptos::prelude::*;

use super::analysis::AnalysisView;
use super::attention::AttentionView;
use super::cnn_view::CnnView;
use super::explain::Explanations;
use super::heads_matter::HeadsMatter;
use super::occlusion::Occlusion;
use crate::analysis::MapChoice;
use crate::analysis::inference::ModelInsight;
use crate::analysis::reading::Reading;
use crate::model::VitConfig;
use crate::place::Part;
use crate::ui::state::{BatchDistance, Classifications, Drawing, LabView};
use crate::ui::widgets::on_first_sight;

/// What the heatmap card is drawn for: the patch grid, the layers and the heads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct MapShape {
    pub grid: usize,
    pub depth: usize,
    pub heads: usize,
}

impl MapShape {
    /// A ViT's, or none for a CNN; the shipped model's while no model is in.
    pub fn of(insight: Option<&ModelInsight>) -> Option<Self> {
        let shipped = VitConfig::lab();
        let config = match insight {
            None => &shipped,
            Some(ModelInsight::Vit(config, _)) => config,
            Some(ModelInsight::Cnn(_)) => return None,
        };
        Some(Self {
            grid: config.grid_size(),
            depth: config.depth,
            heads: config.heads,
        })
    }

    /// The newest reading, if its maps are of this shape (one by a model before may not be).
    fn reading(self, classified: RwSignal<Option<Arc<Reading>>>) -> Signal<Option<Arc<Reading>>> {
        Signal::derive(move || {
            classified
                .get()
                .filter(|r| r.fits(self.grid, self.depth, self.heads))
        })
    }
}

/// The heatmap card: the chosen map over the model's input, and every layer's and head's.
#[component]
pub(super) fn WhereItLooks(shape: MapShape) -> impl IntoView {
    let (drawing, lab) = (expect_context::<Drawing>(), expect_context::<LabView>());
    let result = shape.reading(expect_context::<Classifications>().result);
    view! {
        <section class="card heatmaps">
            <h2>"Where it looks"</h2>
            <AttentionView result=result input=drawing.model_input grid=shape.grid depth=shape.depth heads=shape.heads choice=lab.map heads_off=lab.heads_off />
        </section>
    }
}

/// The wide cards of the model in use, each with the id its address names
/// (`crate::place::Part`).
#[component]
pub(super) fn Inside(insight: ModelInsight) -> impl IntoView {
    let map = expect_context::<LabView>().map;
    let distance = expect_context::<BatchDistance>();
    let classified = expect_context::<Classifications>().result;
    match insight {
        ModelInsight::Vit(config, insight) => {
            let grid = config.grid_size();
            let (depth, heads, patch_size) = (config.depth, config.heads, config.patch_size);
            // Other weights may have fewer layers or heads than the map asks for.
            if !map.get_untracked().fits(depth, heads) {
                map.set(MapChoice::Rollout);
            }
            let result = MapShape { grid, depth, heads }.reading(classified);
            // Fig. 7's distance over test digits is measured once this card is seen.
            let inside = NodeRef::<Section>::new();
            on_first_sight(inside, Callback::new(move |()| distance.want()));
            view! {
                <section class="card wide" id=Part::BeyondRollout.slug() tabindex="-1">
                    <h2>"Beyond rollout"</h2>
                    <Explanations grid=grid depth=depth />
                </section>
                <section class="card wide" id=Part::PatchesHidden.slug() tabindex="-1">
                    <h2>"Patches hidden: ViT against CNN"</h2>
                    <Occlusion grid=grid />
                </section>
                <section class="card wide" data-testid="heads-matter-card" id=Part::HeadsMatter.slug() tabindex="-1">
                    <h2>"Which heads matter"</h2>
                    <HeadsMatter depth=depth heads=heads />
                </section>
                <section class="card wide" node_ref=inside id=Part::InsideTheModel.slug() tabindex="-1">
                    <h2>"Inside the model"</h2>
                    <AnalysisView insight=Arc::new(insight) result=result batch_distance=distance.distance grid=grid patch_size=patch_size />
                </section>
            }
            .into_any()
        }
        ModelInsight::Cnn(insight) => view! {
            <section class="card wide" id=Part::InsideTheModel.slug() tabindex="-1">
                <h2>"Inside the CNN"</h2>
                <CnnView insight=insight />
            </section>
        }
        .into_any(),
    }
}
