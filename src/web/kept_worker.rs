//! A worker kept for reuse with the weights it was given last, and started again once it has
//! failed: the one holder behind the model host's drawing workers, the explaining worker and
//! the heads card's measuring worker.

use std::cell::RefCell;
use std::rc::Rc;

use super::{DrawingWorker, explain::ExplainingWorker};

/// A worker that can say it has failed (it died, or a request it held was lost).
pub trait Failing {
    fn has_failed(&self) -> bool;
}

impl Failing for DrawingWorker {
    fn has_failed(&self) -> bool {
        self.failure().is_some()
    }
}

impl Failing for ExplainingWorker {
    fn has_failed(&self) -> bool {
        self.failure().is_some()
    }
}

/// The worker held, and the weights it was given last.
struct Held<W> {
    worker: Rc<W>,
    weights: Option<Rc<Vec<u8>>>,
}

/// A worker kept for reuse; clones share it. Dropping the last handle on a worker ends it.
pub struct KeptWorker<W>(Rc<RefCell<Option<Held<W>>>>);

impl<W> Clone for KeptWorker<W> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<W> Default for KeptWorker<W> {
    fn default() -> Self {
        Self(Rc::new(RefCell::new(None)))
    }
}

impl<W: Failing> KeptWorker<W> {
    /// The worker held, if it has not failed.
    fn healthy(&self) -> Option<Held<W>> {
        self.0
            .borrow()
            .as_ref()
            .filter(|held| !held.worker.has_failed())
            .map(|held| Held {
                worker: held.worker.clone(),
                weights: held.weights.clone(),
            })
    }

    fn hold(&self, worker: Rc<W>, weights: Option<Rc<Vec<u8>>>) {
        *self.0.borrow_mut() = Some(Held { worker, weights });
    }

    /// The worker held, or one `start`ed and held in its place.
    pub fn get_or_start<E>(&self, start: impl FnOnce() -> Result<Rc<W>, E>) -> Result<Rc<W>, E> {
        if let Some(held) = self.healthy() {
            return Ok(held.worker);
        }
        let worker = start()?;
        self.hold(worker.clone(), None);
        Ok(worker)
    }

    /// The worker held, holding `weights` (the same bytes: `Rc::ptr_eq`), or given them by
    /// `give`; or a worker `start`ed, held, and given them. A worker is held from the moment
    /// it is given weights, before `give`'s answer: what is asked of it meanwhile reaches it
    /// after them, rather than starting a worker of its own. `give` is called before this
    /// awaits anything. A worker that was not given the weights is let go.
    pub async fn with_weights<E, F>(
        &self,
        weights: &Rc<Vec<u8>>,
        start: impl FnOnce() -> Result<Rc<W>, E>,
        give: impl FnOnce(Rc<W>, Rc<Vec<u8>>) -> F,
    ) -> Result<Rc<W>, E>
    where
        F: Future<Output = Result<(), E>>,
    {
        let held = self.healthy();
        if let Some(Held {
            worker,
            weights: Some(given),
        }) = &held
            && Rc::ptr_eq(given, weights)
        {
            return Ok(worker.clone());
        }
        let worker = match held {
            Some(held) => held.worker,
            None => start()?,
        };
        self.hold(worker.clone(), Some(weights.clone()));
        match give(worker.clone(), weights.clone()).await {
            Ok(()) => Ok(worker),
            Err(error) => {
                self.forget_if(&worker);
                Err(error)
            }
        }
    }

    /// Lets the worker held go (the next request starts one).
    pub fn forget(&self) {
        // `replace` lets the cell go before the old worker is dropped (and the worker ended).
        self.0.replace(None);
    }

    /// Lets `worker` go, if it is still the one held.
    fn forget_if(&self, worker: &Rc<W>) {
        let held_it = self
            .0
            .borrow()
            .as_ref()
            .is_some_and(|held| Rc::ptr_eq(&held.worker, worker));
        if held_it {
            self.forget();
        }
    }
}
