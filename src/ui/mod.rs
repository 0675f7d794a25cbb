//! Leptos components. They never touch a tensor: the model sits behind `web`.

use leptos::prelude::*;

use crate::model::VitConfig;
use crate::web::{self, Backend};

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let preferred = web::query_param("backend").and_then(|text| Backend::parse(&text));
    let started = LocalResource::new(move || web::start_device(preferred));
    let seed = VitConfig::seed();
    view! {
        <header>
            <h1>"vitlab"</h1>
            <p class="tagline">"A Vision Transformer that lives in your browser."</p>
        </header>
        <main>
            <section class="card">
                <h2>"Backend"</h2>
                <Suspense fallback=|| view! { <p>"Starting the device…"</p> }>
                    {move || started.get().map(|started| view! {
                        <p data-testid="backend">{started.backend.label()}</p>
                        {started.fallback_reason.map(|reason| view! { <p class="note">{reason}</p> })}
                    })}
                </Suspense>
                <p>{format!("Seed model: {} parameters.", seed.num_params())}</p>
            </section>
        </main>
    }
}
