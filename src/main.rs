//! The page: Trunk builds this binary for wasm32.

#[cfg(target_arch = "wasm32")]
unsafe extern "C" {
    /// The static constructors wasm-ld gathers (Burn's and CubeCL's registrations).
    fn __wasm_call_ctors();
}

#[cfg(target_arch = "wasm32")]
fn main() {
    // Calling the constructors once, here, tells wasm-ld not to re-run them at the start of
    // every export, i.e. on every call from JavaScript into the page (each event, each
    // resolved promise): that cost hundreds of milliseconds a second while training.
    // SAFETY: wasm-ld's constructor list, called once before any other code of ours runs.
    unsafe { __wasm_call_ctors() };
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(vitlab::ui::App);
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("vitlab is the web app: run it with `trunk serve`; the native tool is `vit`.");
}
