//! How the runs table keeps each run: what a message from the trainer means for its record,
//! and the record kept, in the table at once and in the browser after.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::analysis::timeline::Timeline;
use crate::protocol::{FromTrainer, RunState};
use crate::run_record::RunRecord;
use crate::run_view::RunView;
use crate::web::{RunLog, RunLogError};

/// What a message from the trainer means for the run's record.
pub enum Interest {
    None,
    /// A run began (or resumed) with this plan.
    Started(crate::train::TrainingPlan),
    /// Its figures moved: an evaluation, a change of state.
    Moved,
    /// It came to rest (paused, stopped, finished): its weights are worth keeping.
    Rested,
}

impl Interest {
    pub fn of(message: &FromTrainer) -> Self {
        match message {
            FromTrainer::Started { plan, .. } => Self::Started(plan.clone()),
            FromTrainer::State {
                state: RunState::Paused | RunState::Stopped | RunState::Finished,
            } => Self::Rested,
            // Idle and Starting say nothing of a run's figures (a reset, a start under way).
            FromTrainer::State {
                state: RunState::Idle | RunState::Starting,
            } => Self::None,
            FromTrainer::State { .. } | FromTrainer::Test(_) | FromTrainer::Attention { .. } => {
                Self::Moved
            }
            _ => Self::None,
        }
    }
}

/// Keeps the record of the run in progress: in the table at once, in the browser after.
/// Storage that fails is said in the runs panel; the run itself goes on.
#[derive(Clone, Copy)]
pub struct RunKeeper {
    /// The records, oldest first, the run in progress among them.
    pub records: RwSignal<Vec<RunRecord>>,
    /// Why they cannot be kept, when they cannot.
    pub problem: RwSignal<Option<String>>,
    current: StoredValue<Option<RunRecord>, LocalStorage>,
    /// The worker has started the current record's run: until then the panel's view is not
    /// the run's (a reset or a resume cleared it), and nothing is booked.
    live: StoredValue<bool>,
    /// The record the weights asked for at the last rest belong to.
    weights_for: StoredValue<Option<u64>>,
    /// The id the next run to start is saved under (the worker was told it).
    next_id: StoredValue<Option<u64>>,
    /// A run the table's Continue asks the training panel to go on with.
    pub continue_asked: RwSignal<Option<u64>>,
}

impl RunKeeper {
    pub fn new(records: RwSignal<Vec<RunRecord>>, problem: RwSignal<Option<String>>) -> Self {
        Self {
            records,
            problem,
            current: StoredValue::new_local(None),
            live: StoredValue::new(false),
            weights_for: StoredValue::new(None),
            next_id: StoredValue::new(None),
            continue_asked: RwSignal::new(None),
        }
    }

    /// The records kept in this browser, into the table.
    pub fn load(self) {
        spawn_local(async move {
            match RunLog::open().await {
                Ok(log) => self.records.set(log.records().await),
                Err(error) => self.problem.set(Some(error.to_string())),
            }
        });
    }

    /// The timeline of the run in progress, as its record keeps it.
    pub fn timeline(self) -> Timeline {
        self.current
            .with_value(|c| c.as_ref().map(|c| c.timeline.clone()))
            .unwrap_or_default()
    }

    /// The next run to start gets a record of its own.
    pub fn forget_current(self) {
        self.current.set_value(None);
        self.live.set_value(false);
    }

    /// The next run to start is run `id` (its checkpoint's name too); returns it.
    pub fn prepare(self, id: u64) -> u64 {
        self.next_id.set_value(Some(id));
        id
    }

    /// Run `run` goes on from its checkpoint, in its own record (a new one of that id if the
    /// record is gone).
    pub async fn resume(self, run: u64) {
        let record = match RunLog::open().await {
            Ok(log) => log.record(run).await,
            Err(_) => None,
        };
        self.live.set_value(false);
        self.next_id.set_value(Some(run));
        self.current.set_value(record);
    }

    /// Whether run `id` has a checkpoint to continue from, in its record.
    pub fn checkpointed(self, id: u64, kept: bool) {
        let current = self.current.get_value().filter(|c| c.id == id);
        let record = current.or_else(|| {
            self.records
                .with_untracked(|all| all.iter().find(|r| r.id == id).cloned())
        });
        if let Some(mut record) = record.filter(|r| r.has_checkpoint != kept) {
            record.has_checkpoint = kept;
            self.keep(record);
        }
    }

    /// A record deleted from the table: the run in progress, if it was that one, goes on
    /// without a record.
    pub fn deleted(self, id: u64) {
        if self.current.with_value(|c| c.as_ref().map(|c| c.id)) == Some(id) {
            self.current.set_value(None);
            self.live.set_value(false);
        }
    }

    /// Books a message already applied to `view`; whether to ask for the weights to keep.
    pub fn after(self, interest: Interest, view: &RunView) -> bool {
        let rested = matches!(interest, Interest::Rested);
        match interest {
            Interest::None => return false,
            Interest::Started(plan) => {
                self.live.set_value(true);
                let next = self.next_id.try_update_value(Option::take).flatten();
                if self.current.with_value(Option::is_none) {
                    let id = next.unwrap_or_else(crate::web::new_run_id);
                    self.current.set_value(Some(RunRecord::new(id, plan)));
                }
            }
            Interest::Moved | Interest::Rested if !self.live.get_value() => return false,
            Interest::Moved | Interest::Rested => {}
        }
        let Some(mut record) = self.current.get_value() else {
            return false;
        };
        let id = record.id;
        record.update(view);
        self.keep(record);
        if rested {
            self.weights_for.set_value(Some(id));
        }
        rested
    }

    /// The run's weights, kept beside its record.
    pub fn keep_weights(self, bytes: Vec<u8>) {
        let Some(id) = self.weights_for.try_update_value(Option::take).flatten() else {
            return;
        };
        spawn_local(async move {
            let kept = match RunLog::open().await {
                Ok(log) => log.save_weights(id, &bytes).await,
                Err(message) => Err(message),
            };
            if let Err(message) = kept {
                return self.said(message);
            }
            // The record as it is now: messages may have moved it while the weights were saved.
            let current = self.current.get_value().filter(|c| c.id == id);
            let kept_record = current.or_else(|| {
                self.records
                    .with_untracked(|all| all.iter().find(|r| r.id == id).cloned())
            });
            if let Some(mut record) = kept_record {
                record.has_weights = true;
                self.keep(record);
            }
        });
    }

    fn keep(self, record: RunRecord) {
        if self.current.with_value(|c| c.as_ref().map(|c| c.id)) == Some(record.id) {
            self.current.set_value(Some(record.clone()));
        }
        self.records
            .update(|all| match all.iter_mut().find(|r| r.id == record.id) {
                Some(old) => *old = record.clone(),
                None => all.push(record.clone()),
            });
        spawn_local(async move {
            let kept = match RunLog::open().await {
                Ok(log) => log.save(&record).await,
                Err(message) => Err(message),
            };
            if let Err(message) = kept {
                self.said(message);
            }
        });
    }

    fn said(self, error: RunLogError) {
        self.problem.set(Some(format!(
            "The run is not kept in this browser: {error}. Training goes on."
        )));
    }
}
