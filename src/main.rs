//! The page: Trunk builds this binary for wasm32.

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(vitlab::ui::App);
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("vitlab is the web app: run it with `trunk serve`; the native tool is `vit`.");
}
