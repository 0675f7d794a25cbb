//! Requests to a worker that come back as futures: each request's packet gets an id that its
//! answer's packet repeats, a deadline, and the worker's death fails every request waiting and every one that
//! follows. The drawing and explaining workers' clients are each an [`Asker`] and the
//! requests they put.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use futures::channel::oneshot;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::protocol::{Called, Greeting, Reply};

use super::global::within_ms;
use super::link::{Heard, Link, LinkError, WorkerRole};

/// Why a request to a worker got no answer. Any of them but [`AskError::Dropped`] and
/// [`AskError::Unexpected`] ends the worker's use: a worker that failed once is not trusted
/// again.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AskError {
    /// It did not start, refused a request, or died.
    #[error(transparent)]
    Link(#[from] LinkError),
    #[error("{} dropped a request", .0.name())]
    Dropped(WorkerRole),
    #[error("{} did not answer within {seconds} s", .role.name())]
    Late { role: WorkerRole, seconds: u32 },
    /// The worker's own words for why its device failed.
    #[error("{0}")]
    Failed(String),
    /// An answer of the wrong kind (`answer` as Rust prints it) to `to` ("a load").
    #[error("{} answered {answer} to {to}", .role.name())]
    Unexpected {
        role: WorkerRole,
        answer: String,
        to: &'static str,
    },
    #[error("{} was closed", .0.name())]
    Closed(WorkerRole),
}

type Answer<From> = Result<(From, Option<Vec<u8>>), AskError>;

struct Shared<From> {
    next_id: Cell<u32>,
    pending: RefCell<HashMap<u32, oneshot::Sender<Answer<From>>>>,
    /// Why the worker can no longer be used, once it cannot.
    dead: RefCell<Option<AskError>>,
}

impl<From> Shared<From> {
    /// Fails every request waiting, and any that comes later, with `error`.
    fn die(&self, error: AskError) {
        self.dead.borrow_mut().get_or_insert(error.clone());
        for (_, waiting) in self.pending.borrow_mut().drain() {
            let _ = waiting.send(Err(error.clone()));
        }
    }
}

impl<From: Reply> Shared<From> {
    /// What the worker said: an answer goes to the request its packet names.
    fn hear(&self, heard: Heard<From>) {
        match heard {
            Heard::Message(answer, id, bytes) => {
                let waiting = id.and_then(|id| self.pending.borrow_mut().remove(&id));
                if let Some(waiting) = waiting {
                    let _ = waiting.send(Ok((answer, bytes)));
                }
            }
            Heard::Trouble(error @ LinkError::Unreadable(_)) => {
                web_sys::console::warn_1(&error.to_string().into())
            }
            Heard::Trouble(error) => self.die(error.into()),
        }
    }
}

/// A running worker that answers `To` requests with `From` answers; dropping it ends the
/// worker.
pub struct Asker<To, From> {
    role: WorkerRole,
    link: Link<To>,
    shared: Rc<Shared<From>>,
}

impl<To, From> Asker<To, From>
where
    To: Serialize + Called,
    From: DeserializeOwned + Greeting + Reply + std::fmt::Debug + 'static,
{
    /// Starts the worker of `role`.
    pub fn spawn(role: WorkerRole) -> Result<Self, LinkError> {
        let shared = Rc::new(Shared {
            next_id: Cell::new(0),
            pending: RefCell::new(HashMap::new()),
            dead: RefCell::new(None),
        });
        let state = shared.clone();
        let link = Link::spawn(role, "", move |heard| state.hear(heard))?;
        Ok(Self { role, link, shared })
    }

    /// Why this worker can no longer be used, if it cannot.
    pub fn failure(&self) -> Option<AskError> {
        self.shared.dead.borrow().clone()
    }

    /// Sends `request` under an id of its own, with `bytes` beside it, and waits at most
    /// `deadline_ms` for its answer; an answer that says the device failed ends the worker's
    /// use.
    pub async fn request(&self, request: To, bytes: Vec<u8>, deadline_ms: u32) -> Answer<From> {
        if let Some(error) = self.failure() {
            return Err(error);
        }
        let id = self.shared.next_id.get();
        self.shared.next_id.set(id.wrapping_add(1));
        let (answer, waiting) = oneshot::channel();
        self.shared.pending.borrow_mut().insert(id, answer);
        if let Err(error) = self.link.send_request(&request, id, Some(bytes)) {
            self.shared.die(error.into());
        }
        let (answer, bytes) = match within_ms(deadline_ms, waiting).await {
            Some(Ok(answer)) => answer?,
            Some(Err(_)) => return Err(AskError::Dropped(self.role)),
            None => {
                self.shared.pending.borrow_mut().remove(&id);
                let error = AskError::Late {
                    role: self.role,
                    seconds: deadline_ms / 1000,
                };
                self.shared.die(error.clone());
                return Err(error);
            }
        };
        if let Some(fault) = answer.fault() {
            let error = AskError::Failed(fault.to_string());
            self.shared.die(error.clone());
            return Err(error);
        }
        Ok((answer, bytes))
    }

    /// A request whose answer `pick` takes apart; an answer of another kind (which `pick`
    /// hands back) is [`AskError::Unexpected`] to `to`.
    pub async fn ask<T>(
        &self,
        request: To,
        bytes: Vec<u8>,
        deadline_ms: u32,
        to: &'static str,
        pick: impl FnOnce(From, Option<Vec<u8>>) -> Result<T, From>,
    ) -> Result<T, AskError> {
        let (answer, bytes) = self.request(request, bytes, deadline_ms).await?;
        pick(answer, bytes).map_err(|other| AskError::Unexpected {
            role: self.role,
            answer: format!("{other:?}"),
            to,
        })
    }
}

impl<To, From> Drop for Asker<To, From> {
    fn drop(&mut self) {
        // The link ends the worker after this; whoever still waits hears why.
        self.shared.die(AskError::Closed(self.role));
    }
}
