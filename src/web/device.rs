//! The device a page or worker computes on: WebGPU unless the CPU is asked for, the CPU
//! where WebGPU does not start (with why).

use crate::protocol::{BackendKind, DeviceNote};
use burn::tensor::Device;
use wasm_bindgen::JsCast;

/// A started device, and why it is not WebGPU when it is not.
#[derive(Debug, Clone)]
pub struct StartedDevice {
    pub device: Device,
    pub backend: BackendKind,
    pub fallback_reason: Option<DeviceNote>,
}

thread_local! {
    /// WebGPU starts once per page or worker: a second start fails while the first device
    /// lives, so later callers share it.
    static STARTED_WEBGPU: std::cell::RefCell<Option<Device>> = const { std::cell::RefCell::new(None) };
}

pub use crate::protocol::NO_WEBGPU;

/// Whether the page's or worker's browser offers WebGPU at all (`navigator.gpu`).
pub fn has_webgpu() -> bool {
    let navigator = js_sys::Reflect::get(&js_sys::global(), &"navigator".into());
    navigator
        .and_then(|navigator| js_sys::Reflect::get(&navigator, &"gpu".into()))
        .is_ok_and(|gpu| !gpu.is_undefined() && !gpu.is_null())
}

/// Why a browser that has WebGPU computes on the CPU when it offers no adapter (no GPU, or one
/// it blocks).
pub const NO_ADAPTER: &str = "WebGPU offers no GPU adapter here";

/// Whether WebGPU offers an adapter: asked before the GPU worker (3 MB) is fetched to learn the
/// same thing.
pub async fn adapter_available() -> bool {
    let Ok(gpu) = js_sys::Reflect::get(&js_sys::global(), &"navigator".into())
        .and_then(|navigator| js_sys::Reflect::get(&navigator, &"gpu".into()))
    else {
        return false;
    };
    let request = js_sys::Reflect::get(&gpu, &"requestAdapter".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    let Some(promise) = request
        .and_then(|request| request.call0(&gpu).ok())
        .and_then(|promise| promise.dyn_into::<js_sys::Promise>().ok())
    else {
        return false;
    };
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .is_ok_and(|adapter| !adapter.is_null() && !adapter.is_undefined())
}

/// The device of `backend` and no other, or why it did not start, in words: for a worker that
/// must compute there (the GPU's drawing worker, the explaining worker's WebGPU requests).
pub async fn start_exactly(backend: BackendKind) -> Result<Device, String> {
    let started = start_device(Some(backend)).await;
    if started.backend != backend {
        return Err(started
            .fallback_reason
            .map_or_else(|| "WebGPU did not start".into(), |note| note.to_string()));
    }
    Ok(started.device)
}

/// Starts WebGPU unless the CPU is asked for; falls back to the CPU when WebGPU fails.
pub async fn start_device(preferred: Option<BackendKind>) -> StartedDevice {
    if preferred == Some(BackendKind::Cpu) {
        return StartedDevice {
            device: Device::flex(),
            backend: BackendKind::Cpu,
            fallback_reason: None,
        };
    }
    if let Some(device) = STARTED_WEBGPU.with_borrow(Clone::clone) {
        return StartedDevice {
            device,
            backend: BackendKind::WebGpu,
            fallback_reason: None,
        };
    }
    start_webgpu().await
}

/// WebGPU, or the CPU with the reason WebGPU failed.
#[cfg(feature = "gpu")]
async fn start_webgpu() -> StartedDevice {
    if !has_webgpu() {
        return StartedDevice {
            device: Device::flex(),
            backend: BackendKind::Cpu,
            fallback_reason: Some(DeviceNote::NoWebGpu),
        };
    }
    match Device::wgpu_options().init_with_setup_async().await {
        Ok((device, setup)) => {
            STARTED_WEBGPU.set(Some(device.clone()));
            // CubeCL's own wgpu device, for the error scopes around a warm-up.
            super::gpu_errors::keep_started(setup.device);
            StartedDevice {
                device,
                backend: BackendKind::WebGpu,
                fallback_reason: None,
            }
        }
        Err(error) => StartedDevice {
            device: Device::flex(),
            backend: BackendKind::Cpu,
            fallback_reason: Some(DeviceNote::Unavailable(error.to_string())),
        },
    }
}

#[cfg(not(feature = "gpu"))]
async fn start_webgpu() -> StartedDevice {
    StartedDevice {
        device: Device::flex(),
        backend: BackendKind::Cpu,
        fallback_reason: Some(DeviceNote::NotBuilt),
    }
}
