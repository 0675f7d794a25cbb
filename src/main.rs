//! The page: Trunk builds this binary for wasm32. In the page's thread it is the interface;
//! started again as a module worker (`www/drawer.js`) it is the drawing worker, which holds the
//! model on the CPU, so the page's thread only paints and a visit downloads one binary. (On
//! WebGPU the model runs in `worker.rs`'s binary.)

#[cfg(all(target_arch = "wasm32", feature = "ui"))]
unsafe extern "C" {
    /// The static constructors wasm-ld gathers (Burn's and CubeCL's registrations).
    fn __wasm_call_ctors();
}

#[cfg(all(target_arch = "wasm32", feature = "ui"))]
fn main() {
    // Calling the constructors once, here, tells wasm-ld not to re-run them at the start of
    // every export, i.e. on every call from JavaScript into the page (each event, each
    // resolved promise): that cost hundreds of milliseconds a second while training.
    // SAFETY: wasm-ld's constructor list, called once before any other code of ours runs.
    unsafe { __wasm_call_ctors() };
    console_error_panic_hook::set_once();
    if web_sys::window().is_none() {
        vitlab::web::report_rejections_as_errors();
        vitlab::web::run_drawing_worker(vitlab::protocol::BackendKind::Cpu);
        return;
    }
    // index.html's first screen gives way to the app's own, laid out the same, once the app
    // is whole: it is built out of the document, a part a task (`ui::Arrival`), so no task of
    // the first load is long and the page never holds two of anything, then put where the
    // static screen was in one go. It starts once the browser has painted the static screen:
    // on a fast load this binary can be ready before the first paint, and the page's largest
    // paint would then wait for it. The header stays; the app fills in where the model runs.
    wasm_bindgen_futures::spawn_local(async {
        vitlab::web::after_next_paint().await;
        let Some(document) = web_sys::window().and_then(|window| window.document()) else {
            return;
        };
        let Ok(holder) = document.create_element("div") else {
            return;
        };
        holder.set_id(vitlab::ui::APP_HOLDER);
        if let Some(lines) = document.get_element_by_id(vitlab::ui::BACKEND_LINES) {
            lines.set_text_content(None);
        }
        let shown = holder.clone();
        let arrival = vitlab::ui::Arrival::new(move || {
            match document.get_element_by_id(vitlab::ui::STATIC_FRAME) {
                Some(frame) => {
                    let _ = frame.replace_with_with_node_1(&shown);
                }
                None => {
                    if let Some(body) = document.body() {
                        let _ = body.append_child(&shown);
                    }
                }
            }
        });
        let holder: web_sys::HtmlElement = wasm_bindgen::JsCast::unchecked_into(holder);
        leptos::mount::mount_to(holder, move || {
            leptos::prelude::provide_context(arrival);
            leptos::prelude::view! { <vitlab::ui::App /> }
        })
        .forget();
        arrival.arrived();
    });
}

/// Natively, or built without the interface (`cargo test --features gpu --test web` builds every
/// binary): nothing to run.
#[cfg(not(all(target_arch = "wasm32", feature = "ui")))]
fn main() {
    eprintln!("vitlab is the web app: run it with `trunk serve`; the native tool is `vit`.");
}
