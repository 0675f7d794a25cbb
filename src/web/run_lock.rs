//! One tab at a time per run: the tab that trains a run holds a Web Lock named for it
//! (`navigator.locks`, in every current browser), so that a second tab asked to continue it
//! (a duplicated tab shares the first one's `sessionStorage`, and the runs table lists every
//! run) says so instead of training one run from one checkpoint in two places. The lock goes
//! with the tab: closed, crashed or reloaded.

use futures::channel::oneshot;
use futures::future::Either;
use wasm_bindgen::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

use crate::run_store::{HeldElsewhere, LockError, RunId, RunLocks};

use super::describe;

/// The browser's Web Locks, as `run_store` takes them.
#[derive(Clone, Copy, Default)]
pub struct WebLocks;

impl RunLocks for WebLocks {
    type Hold = RunHold;

    async fn hold(&self, id: RunId) -> Result<Option<RunHold>, LockError> {
        hold_run(id).await
    }
}

/// This tab's lock on a run, let go when dropped.
pub struct RunHold {
    release: js_sys::Function,
}

impl Drop for RunHold {
    fn drop(&mut self) {
        let _ = self.release.call0(&JsValue::NULL);
    }
}

/// Takes run `run`'s lock unless another tab holds it; `None` where the browser has no Web
/// Locks (nothing to guard with: the run goes on unguarded). A request the browser refuses
/// (an opaque origin, a document not fully active: its promise rejects, and the grant never
/// comes) is said, never waited on forever.
async fn hold_run(run: u64) -> Result<Option<RunHold>, LockError> {
    let Some(locks) = web_sys::window()
        .and_then(|window| js_sys::Reflect::get(&window.navigator(), &"locks".into()).ok())
        .filter(|locks| locks.is_object())
    else {
        return Ok(None);
    };
    let Some(request) = js_sys::Reflect::get(&locks, &"request".into())
        .ok()
        .and_then(|request| request.dyn_into::<js_sys::Function>().ok())
    else {
        return Ok(None);
    };
    // The lock is held until this promise settles: `RunHold` settles it.
    let mut release = None;
    let held = js_sys::Promise::new(&mut |resolve, _| release = Some(resolve));
    let (granted, answer) = oneshot::channel::<bool>();
    let callback = Closure::once_into_js(move |lock: JsValue| -> JsValue {
        let got = !lock.is_null();
        let _ = granted.send(got);
        if got { held.into() } else { JsValue::UNDEFINED }
    });
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"ifAvailable".into(), &JsValue::TRUE);
    let name = JsValue::from_str(&format!("vitlab-run-{run}"));
    let requested = request
        .call3(&locks, &name, &options, &callback)
        .map_err(|error| LockError::Refused(describe(error)))?;
    // The request's promise rejects when the browser refuses it; it resolves only once the
    // lock is let go, long after the grant.
    let refused = async move {
        match requested.dyn_into::<js_sys::Promise>() {
            Ok(promise) => match wasm_bindgen_futures::JsFuture::from(promise).await {
                Err(error) => describe(error),
                Ok(_) => std::future::pending().await,
            },
            Err(_) => std::future::pending().await,
        }
    };
    match futures::future::select(answer, Box::pin(refused)).await {
        Either::Left((Ok(true), _)) => match release {
            Some(release) => Ok(Some(RunHold { release })),
            None => Ok(None),
        },
        Either::Left((Ok(false), _)) => Err(HeldElsewhere(run).into()),
        Either::Left((Err(_), _)) => Ok(None),
        Either::Right((why, _)) => Err(LockError::Refused(why)),
    }
}
