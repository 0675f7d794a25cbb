//! The errors a WebGPU device reports while some work runs, caught rather than left to
//! CubeCL: on wasm it checks a shader and a pipeline without waiting for the answer, and an
//! error nobody caught reaches its handler, which panics in a later task, after the work
//! seemed to succeed. [`gpu_checked`] runs work inside error scopes, so that the GPU worker's
//! warm-up and the training trial's steps call WebGPU good only once their scopes have come
//! back clean.

/// The GPU reported an error while checked work ran: a shader or pipeline it rejected, memory
/// it ran out of, or an internal error (as the browser says it).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the GPU rejected its work: {0}")]
pub struct GpuRejected(String);

/// `work`'s outcome, or why the WebGPU device started here rejected what it did. Where
/// WebGPU did not start (or the build has none), `work` as it is.
pub async fn gpu_checked<T>(work: impl Future<Output = T>) -> Result<T, GpuRejected> {
    #[cfg(feature = "gpu")]
    {
        let scope = scope::GpuErrorScope::open();
        let outcome = work.await;
        match scope {
            Some(scope) => match scope.close().await {
                Some(error) => Err(GpuRejected(error.to_string())),
                None => Ok(outcome),
            },
            None => Ok(outcome),
        }
    }
    #[cfg(not(feature = "gpu"))]
    Ok(work.await)
}

#[cfg(feature = "gpu")]
pub(super) use scope::keep_started;

#[cfg(feature = "gpu")]
mod scope {
    use std::cell::{Cell, RefCell};

    use burn::tensor::wgpu::wgpu;

    thread_local! {
        /// CubeCL's own wgpu device behind this page's or worker's started WebGPU device.
        static STARTED_WGPU: RefCell<Option<wgpu::Device>> = const { RefCell::new(None) };
        /// A scope is open: a second one opened while the first awaits its work could be
        /// popped out of order (wgpu panics then), so it is not opened; its work runs inside
        /// the first's.
        static OPEN: Cell<bool> = const { Cell::new(false) };
    }

    /// Keeps `device`, the wgpu device WebGPU started on here, for scopes opened later.
    pub fn keep_started(device: wgpu::Device) {
        STARTED_WGPU.set(Some(device));
    }

    /// Errors of every kind the device reports from [`open`](Self::open) to
    /// [`close`](Self::close). A wgpu scope pops only in the reverse order of its push: these
    /// pop in order even when dropped unclosed. No other scope may be left open between the
    /// two (CubeCL's own open and close within one call).
    pub struct GpuErrorScope(Vec<wgpu::ErrorScopeGuard>);

    impl GpuErrorScope {
        /// A scope on the WebGPU device started here; `None` where WebGPU did not start or a
        /// scope is already open (see `OPEN`).
        pub fn open() -> Option<Self> {
            if OPEN.get() {
                return None;
            }
            let device = STARTED_WGPU.with_borrow(Clone::clone)?;
            OPEN.set(true);
            Some(Self(vec![
                device.push_error_scope(wgpu::ErrorFilter::Validation),
                device.push_error_scope(wgpu::ErrorFilter::OutOfMemory),
                device.push_error_scope(wgpu::ErrorFilter::Internal),
            ]))
        }

        /// The first error the device reported while the scope was open; `None` when clean.
        pub async fn close(mut self) -> Option<wgpu::Error> {
            // Every pop at once, innermost first (each takes effect when called); then their
            // answers.
            let pops: Vec<_> = std::iter::from_fn(|| self.0.pop())
                .map(wgpu::ErrorScopeGuard::pop)
                .collect();
            OPEN.set(false);
            let mut first = None;
            for pop in pops {
                if let Some(error) = pop.await {
                    first.get_or_insert(error);
                }
            }
            first
        }
    }

    impl Drop for GpuErrorScope {
        fn drop(&mut self) {
            while let Some(guard) = self.0.pop() {
                drop(guard);
            }
            OPEN.set(false);
        }
    }
}
