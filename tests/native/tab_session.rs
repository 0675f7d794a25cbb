//! A tab's training session ([`TabSession`]) as the page runs it, with the page's browser
//! parts played here: the run keeper over a memory store and locks shared by two tabs, a
//! worker that answers as the training worker does (and dies when told), the keeper's answers
//! landing later, in order, and cards that ask for runs. Every button twice, the worker killed
//! in every state, the page hidden mid-keeping, reloads, and every interleaving of them: once
//! all has landed, a lock is held only while a live worker trains the run, nothing waits for a
//! worker that is gone, and every card hears what became of the run it asked for.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

use vitlab::protocol::{BackendKind, FromTrainer, NonFinite, RunState, ToTrainer, TrainerFailure};
use vitlab::rng::SplitMix64;
use vitlab::run_record::RunRecord;
use vitlab::run_store::memory::{MemoryLocks, MemoryStore, MemoryTab};
use vitlab::run_store::{
    Keeper, KeeperError, Kept, RunId, RunStore, StartRefused, StoreError, TabMemory,
};
use vitlab::run_view::{RunFailure, RunView, WorkerLoss};
use vitlab::tab_session::{
    AskId, Command, Event, Page, RunEnded, StartError, TabSession, ToKeeper, WorkerId,
};
use vitlab::train::{History, TrainingPlan};

use crate::run_now;

type TabKeeper = Keeper<MemoryStore, MemoryLocks, MemoryTab>;

fn checkpoint(step: usize) -> Vec<u8> {
    (step as u64).to_le_bytes().to_vec()
}

fn step_of(checkpoint: &[u8]) -> usize {
    u64::from_le_bytes(checkpoint[..8].try_into().unwrap()) as usize
}

/// The training worker, as far as the session hears it.
#[derive(Debug)]
struct Worker {
    id: WorkerId,
    run: Option<RunId>,
    step: usize,
    state: RunState,
    /// What it sent that the page has not heard yet.
    outbox: VecDeque<(FromTrainer, Option<Vec<u8>>)>,
}

impl Worker {
    fn new(id: WorkerId) -> Self {
        Self {
            id,
            run: None,
            step: 0,
            state: RunState::Idle,
            outbox: VecDeque::new(),
        }
    }

    fn say(&mut self, message: FromTrainer) {
        self.outbox.push_back((message, None));
    }

    fn set(&mut self, state: RunState) {
        self.state = state;
        self.say(FromTrainer::State { state });
    }

    /// A checkpoint, with weights where it is a rest.
    fn keep(&mut self, rest: Option<RunState>) {
        let Some(run) = self.run else { return };
        let mut bytes = checkpoint(self.step);
        let weights_at = rest.map(|_| bytes.len());
        if rest.is_some() {
            bytes.push(7);
        }
        let message = FromTrainer::Checkpoint {
            run,
            step: self.step,
            rest,
            weights_at,
        };
        self.outbox.push_back((message, Some(bytes)));
    }

    /// What the real worker does with a message of the page.
    fn hear(&mut self, message: ToTrainer, bytes: Option<Vec<u8>>) {
        use RunState::*;
        match message {
            ToTrainer::Start { run, .. } | ToTrainer::Continue { run, .. } => {
                let continues = matches!(message, ToTrainer::Continue { .. });
                let plan = match message {
                    ToTrainer::Start { plan, .. } => plan,
                    // A Continue's plan is in its checkpoint: the seed's, here.
                    _ => TrainingPlan::seed(),
                };
                self.run = Some(run);
                // A Start's bytes are the weights a fine-tuning begins from.
                self.step = if continues {
                    bytes.as_deref().map_or(0, step_of)
                } else {
                    0
                };
                self.set(Starting);
                self.say(FromTrainer::Started {
                    backend: BackendKind::Cpu,
                    note: None,
                    plan,
                    history: History::default(),
                });
                self.set(Running);
            }
            ToTrainer::Pause if self.state == Running => {
                self.set(Paused);
                self.keep(Some(Paused));
            }
            ToTrainer::Stop if matches!(self.state, Running | Paused) => {
                self.set(Stopped);
                self.keep(Some(Stopped));
            }
            ToTrainer::Resume if matches!(self.state, Paused | Stopped | Failed) => {
                self.set(Running)
            }
            ToTrainer::Reset => {
                self.run = None;
                self.set(Idle);
            }
            ToTrainer::PageHidden { hidden: true } if self.state == Running => self.keep(None),
            _ => {}
        }
    }
}

/// A card's side: what it asked, what it heard.
#[derive(Debug, Default)]
struct Cards {
    asked: AskId,
    unanswered: BTreeSet<AskId>,
    /// The run a card awaits.
    awaiting: Option<RunId>,
    answers: Vec<Result<RunId, StartError>>,
    ends: Vec<Result<RunId, RunEnded>>,
}

struct Tab {
    session: TabSession,
    view: RunView,
    memory: MemoryTab,
    keeper: TabKeeper,
    worker: Option<Worker>,
    /// What the keeper was asked and has not answered, in order.
    pending: VecDeque<ToKeeper>,
    cards: Cards,
    /// Commands carried out, for the tests that count them.
    log: Vec<Command>,
}

/// What a person, a worker and the storage bring, in one tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Move {
    Train,
    PauseOrResume,
    Stop,
    Reset,
    ResumeSaved,
    /// "Learn my handwriting": a card asks for a run.
    CardStart,
    /// The runs table's Continue of the other tab's run.
    ContinueOthers,
    /// The runs table's Delete of this tab's run.
    DeleteOwn,
    Hide,
    Show,
    /// The worker evaluates and keeps.
    Evaluate,
    /// The worker's run finishes.
    Finish,
    /// The worker's loss went NaN: it says so and fails.
    Fails,
    /// The worker dies: what it had not sent dies with it.
    Dies,
    /// The oldest message of the worker reaches the page.
    Deliver,
    /// The keeper's oldest answer lands.
    Land,
    Reload,
}

const MOVES: [Move; 17] = [
    Move::Train,
    Move::PauseOrResume,
    Move::Stop,
    Move::Reset,
    Move::ResumeSaved,
    Move::CardStart,
    Move::ContinueOthers,
    Move::DeleteOwn,
    Move::Hide,
    Move::Show,
    Move::Evaluate,
    Move::Finish,
    Move::Fails,
    Move::Dies,
    Move::Deliver,
    Move::Land,
    Move::Reload,
];

struct World {
    store: MemoryStore,
    locks: MemoryLocks,
    draws: Rc<RefCell<u64>>,
    tabs: [Tab; 2],
    /// The highest step kept of each run, while it keeps its checkpoint.
    kept: BTreeMap<RunId, usize>,
}

impl World {
    fn new() -> Self {
        let (store, locks) = (MemoryStore::default(), MemoryLocks::default());
        let draws = Rc::new(RefCell::new(0));
        let tab = || Tab::new(&store, &locks, MemoryTab::default(), &draws);
        let tabs = [tab(), tab()];
        let mut world = Self {
            store,
            locks,
            draws,
            tabs,
            kept: BTreeMap::new(),
        };
        // The pages have looked for a run to offer.
        world.settle();
        world
    }

    fn play(&mut self, t: usize, step: Move) {
        let other_run = self.tabs[1 - t].keeper.current_id();
        let tab = &mut self.tabs[t];
        match step {
            Move::Train => tab.on(Event::Train(TrainingPlan::seed())),
            Move::PauseOrResume => tab.on(Event::PauseOrResume),
            Move::Stop => tab.on(Event::Ask(ToTrainer::Stop)),
            Move::Reset => tab.on(Event::Reset),
            Move::ResumeSaved => tab.on(Event::ResumeSaved(None)),
            Move::CardStart => {
                tab.cards.asked += 1;
                let ask = tab.cards.asked;
                tab.cards.unanswered.insert(ask);
                let (plan, weights) = (TrainingPlan::seed(), vec![1, 2, 3]);
                tab.on(Event::CardStart { ask, plan, weights });
            }
            Move::ContinueOthers => {
                if let Some(run) = other_run {
                    tab.on(Event::CardContinue(run));
                }
            }
            Move::DeleteOwn => {
                let Some(run) = tab.keeper.current_id().or_else(|| tab.memory.run()) else {
                    return;
                };
                // The runs table deletes, then tells the panel where it was the tab's run.
                if let Ok(ours) = run_now(tab.keeper.delete(run)) {
                    self.kept.remove(&run);
                    if ours {
                        tab.on(Event::RunDeleted(run));
                    }
                }
            }
            Move::Hide => tab.on(Event::PageHidden(true)),
            Move::Show => tab.on(Event::PageHidden(false)),
            Move::Evaluate | Move::Finish | Move::Fails => {
                let Some(worker) = tab.worker.as_mut().filter(|w| w.state == RunState::Running)
                else {
                    return;
                };
                worker.step += 1;
                match step {
                    Move::Evaluate => worker.keep(None),
                    Move::Finish => {
                        worker.set(RunState::Finished);
                        worker.keep(Some(RunState::Finished));
                    }
                    _ => {
                        worker.say(FromTrainer::Failed(TrainerFailure::Diverged {
                            step: worker.step,
                            loss: NonFinite::Infinite,
                            back_to: None,
                        }));
                        worker.set(RunState::Failed);
                    }
                }
            }
            Move::Dies => {
                if let Some(worker) = tab.worker.take() {
                    let lost = WorkerLoss::Died("it ran out of memory".into());
                    tab.on(Event::WorkerLost(worker.id, lost));
                }
            }
            Move::Deliver => {
                let Some(worker) = tab.worker.as_mut() else {
                    return;
                };
                if let Some((message, bytes)) = worker.outbox.pop_front() {
                    let id = worker.id;
                    tab.on(Event::Worker(id, message, bytes));
                }
            }
            Move::Land => {
                if let Some(asked) = tab.pending.pop_front() {
                    let before = self.checkpoints();
                    let tab = &mut self.tabs[t];
                    if let Some(event) = tab.land(asked) {
                        tab.on(event);
                    }
                    self.note_kept(&before);
                }
            }
            Move::Reload => {
                // The page, its worker and whatever it had not finished are gone; the tab's
                // memory stays.
                let memory = tab.memory.clone();
                *tab = Tab::new(&self.store, &self.locks, memory, &self.draws);
            }
        }
    }

    /// Each run's checkpoint step, as stored now.
    fn checkpoints(&self) -> BTreeMap<RunId, Option<usize>> {
        run_now(self.store.records())
            .unwrap()
            .into_iter()
            .map(|r| {
                let saved = run_now(self.store.checkpoint(r.id)).unwrap();
                (r.id, saved.as_deref().map(step_of))
            })
            .collect()
    }

    /// No kept step goes back: a keeping lands at or past the one before it.
    fn note_kept(&mut self, before: &BTreeMap<RunId, Option<usize>>) {
        for (run, step) in self.checkpoints() {
            let Some(step) = step else { continue };
            if before.get(&run) != Some(&Some(step)) {
                let best = self.kept.entry(run).or_default();
                assert!(step >= *best, "run {run} kept at {step} after {best}");
                *best = step;
            }
        }
    }

    /// Everything in flight lands and every message is heard, as a page left alone would.
    fn settle(&mut self) {
        for _ in 0..200 {
            let busy = (0..2).find(|&t| {
                let tab = &self.tabs[t];
                !tab.pending.is_empty() || tab.worker.as_ref().is_some_and(|w| !w.outbox.is_empty())
            });
            let Some(t) = busy else { return };
            if self.tabs[t].pending.is_empty() {
                self.play(t, Move::Deliver);
            } else {
                self.play(t, Move::Land);
            }
        }
        panic!("the tabs never settled");
    }

    /// What must hold once all has landed.
    fn check(&self, history: &[(usize, Move)]) {
        let training: BTreeSet<RunId> = self
            .tabs
            .iter()
            .filter_map(|tab| {
                let worker = tab.worker.as_ref()?;
                let alive = !matches!(
                    worker.state,
                    RunState::Idle | RunState::Stopped | RunState::Finished
                );
                worker.run.filter(|_| alive && tab.session.has_worker())
            })
            .collect();
        assert!(
            self.locks.held().is_subset(&training),
            "locks held {:?}, runs a live worker trains {training:?}: {history:?}",
            self.locks.held()
        );
        for (t, tab) in self.tabs.iter().enumerate() {
            assert!(
                tab.cards.unanswered.is_empty(),
                "tab {t}: a card's start never answered: {history:?}"
            );
            if let Some(run) = tab.cards.awaiting {
                let alive = tab.worker.as_ref().is_some_and(|w| w.run == Some(run));
                assert!(
                    alive && tab.keeper.current_id() == Some(run),
                    "tab {t}: a card awaits run {run}, which nothing trains: {history:?}"
                );
            }
            let state = tab.view.state;
            assert_ne!(
                state,
                RunState::Starting,
                "tab {t}: starting, with nothing on its way: {history:?}"
            );
            if state == RunState::Running {
                let worker = tab.worker.as_ref().map(|w| w.state);
                assert_eq!(
                    worker,
                    Some(RunState::Running),
                    "tab {t}: the panel says running: {history:?}"
                );
            }
            assert_eq!(
                tab.session.has_worker(),
                tab.worker.is_some(),
                "tab {t}: the session's worker: {history:?}"
            );
        }
    }
}

impl Tab {
    fn new(
        store: &MemoryStore,
        locks: &MemoryLocks,
        memory: MemoryTab,
        draws: &Rc<RefCell<u64>>,
    ) -> Self {
        let keeper = crate::run_store::keeper(store, locks, &memory, draws);
        let mut tab = Self {
            session: TabSession::default(),
            view: RunView::default(),
            memory,
            keeper,
            worker: None,
            pending: VecDeque::new(),
            cards: Cards::default(),
            log: Vec::new(),
        };
        tab.on(Event::Opened);
        tab
    }

    fn page(&self) -> Page {
        Page {
            tab_run: self.keeper.current_id().or_else(|| self.memory.run()),
            backend: None,
        }
    }

    /// One event, and its commands carried out as the page's service carries them.
    fn on(&mut self, event: Event) {
        let page = self.page();
        for command in self.session.on(&mut self.view, page, event) {
            self.log.push(command.clone());
            match command {
                Command::StartWorker(id) => self.worker = Some(Worker::new(id)),
                Command::EndWorker => self.worker = None,
                Command::Send(message, bytes) => {
                    if let Some(worker) = self.worker.as_mut() {
                        worker.hear(message, bytes);
                    }
                }
                Command::SendDrawing | Command::UseWeights { .. } | Command::Download { .. } => {}
                Command::Keeper(asked) => self.pending.push_back(asked),
                Command::AnswerCard { ask, answer } => {
                    assert!(
                        self.cards.unanswered.remove(&ask),
                        "card {ask} answered twice"
                    );
                    if let Ok(run) = answer {
                        assert_eq!(self.cards.awaiting, None, "two runs awaited");
                        self.cards.awaiting = Some(run);
                    }
                    self.cards.answers.push(answer);
                }
                Command::EndCard(ended) => {
                    let run = self
                        .cards
                        .awaiting
                        .take()
                        .expect("an end with no card waiting");
                    self.cards.ends.push(Err(ended));
                    let _ = run;
                }
                Command::FinishCard(run) => {
                    assert_eq!(self.cards.awaiting.take(), Some(run));
                    self.cards.ends.push(Ok(run));
                }
            }
        }
    }

    /// What the keeper does with what it was asked, as the page's run keeper does it; its
    /// answer, where the session awaits one.
    fn land(&mut self, asked: ToKeeper) -> Option<Event> {
        let keeper = &self.keeper;
        match asked {
            ToKeeper::StartRun(plan) => {
                let make = |id| RunRecord::new(id, plan.clone(), 1);
                let started = run_now(keeper.start(make, None));
                Some(Event::StartKept(
                    started.map(|(id, _)| id).map_err(StartRefused::NotKept),
                ))
            }
            ToKeeper::StartFromFile(bytes) => {
                let make = |id| RunRecord::new(id, TrainingPlan::seed(), 1);
                let started = run_now(keeper.start(make, Some(bytes)));
                Some(Event::StartKept(
                    started.map(|(id, _)| id).map_err(StartRefused::FileNotKept),
                ))
            }
            ToKeeper::ContinueRun(run) => Some(Event::Continued {
                run,
                taken: run_now(keeper.continue_run(run)),
            }),
            ToKeeper::GoOn { worker_failed } => {
                let going = if worker_failed {
                    run_now(keeper.go_on_after_failure())
                } else {
                    run_now(keeper.go_on())
                };
                Some(Event::WentOn(going))
            }
            ToKeeper::Keep {
                run,
                view,
                checkpoint,
                weights,
                rest,
            } => {
                let resting = rest.and_then(vitlab::run_store::Rest::of);
                let update = |record: &mut RunRecord| record.update(view.progress());
                let kept = run_now(keeper.keep(run, update, (Some(checkpoint), weights), resting));
                let (checkpoint, kept) = (true, Kept::from(kept));
                Some(Event::Kept {
                    run,
                    rest,
                    checkpoint,
                    kept,
                })
            }
            ToKeeper::KeepRecord(view) => {
                let run = keeper.current_id()?;
                let update = |record: &mut RunRecord| record.update(view.progress());
                let kept = Kept::from(run_now(keeper.keep(run, update, (None, None), None)));
                let (rest, checkpoint) = (None, false);
                Some(Event::Kept {
                    run,
                    rest,
                    checkpoint,
                    kept,
                })
            }
            ToKeeper::Began => {
                if let Some(run) = keeper.current_id() {
                    keeper.began(run);
                }
                None
            }
            ToKeeper::Idle { start_ended } => {
                let _ = run_now(keeper.idle(start_ended));
                None
            }
            ToKeeper::RestedUnsaved { run, rest } => {
                keeper.rested_unsaved(run, rest);
                None
            }
            ToKeeper::LetGo { worker_alive } => {
                let _ = run_now(keeper.reset_run(worker_alive));
                None
            }
            ToKeeper::WorkerLost => {
                let _ = run_now(keeper.worker_lost());
                None
            }
            ToKeeper::ForgetCheckpoint(run, revision) => {
                let _ = run_now(keeper.forget_checkpoint(run, revision));
                None
            }
            ToKeeper::ReadSaved => {
                let offered = run_now(keeper.offered())?;
                let saved = run_now(keeper.store().checkpoint(offered.id)).unwrap();
                Some(Event::SavedRead(Some(Ok(vitlab::train::SavedSummary {
                    step: saved.as_deref().map_or(0, step_of),
                    total_steps: offered.total_steps,
                    plan: offered.plan,
                }))))
            }
            ToKeeper::ShowKept { .. }
            | ToKeeper::DropRow(_)
            | ToKeeper::ReloadRows
            | ToKeeper::RunsProblem(_)
            | ToKeeper::NotKept(_) => None,
        }
    }

    /// The commands of the last event, for the tests that count them.
    fn take_log(&mut self) -> Vec<Command> {
        std::mem::take(&mut self.log)
    }
}

fn play(history: &[(usize, Move)]) -> World {
    let mut world = World::new();
    for &(t, step) in history {
        world.play(t, step);
    }
    world.settle();
    world.check(history);
    world
}

/// Tab 0 trains run 1 and it is running (its worker heard, its keepings landed).
fn training() -> World {
    let mut world = World::new();
    world.play(0, Move::Train);
    world.settle();
    assert_eq!(world.tabs[0].view.state, RunState::Running);
    world.tabs[0].take_log();
    world
}

/// Tab 0's run, stopped and kept.
fn stopped() -> World {
    let mut world = training();
    world.play(0, Move::Stop);
    world.settle();
    world
}

fn count(log: &[Command], what: impl Fn(&Command) -> bool) -> usize {
    log.iter().filter(|c| what(c)).count()
}

#[test]
fn every_button_pressed_twice_acts_once() {
    // Train twice before the start is kept: one run.
    let mut world = World::new();
    world.play(0, Move::Train);
    world.play(0, Move::Train);
    let log = world.tabs[0].take_log();
    let starts = count(&log, |c| {
        matches!(c, Command::Keeper(ToKeeper::StartRun(_)))
    });
    assert_eq!(starts, 1, "two clicks on Train: {log:?}");
    world.settle();
    assert_eq!(run_now(world.store.records()).unwrap().len(), 1);

    // Resume twice after a stop: one resume asked of the keeper, one sent to the worker.
    let mut world = stopped();
    world.play(0, Move::PauseOrResume);
    world.play(0, Move::PauseOrResume);
    world.settle();
    let log = world.tabs[0].take_log();
    let asked = count(&log, |c| {
        matches!(c, Command::Keeper(ToKeeper::GoOn { .. }))
    });
    let resumed = count(&log, |c| matches!(c, Command::Send(ToTrainer::Resume, _)));
    assert_eq!((asked, resumed), (1, 1), "two clicks on Resume: {log:?}");
    assert_eq!(world.tabs[0].view.state, RunState::Running);

    // The runs table's Continue twice: one worker, one run taken.
    let mut world = stopped();
    world.play(1, Move::ContinueOthers);
    world.play(1, Move::ContinueOthers);
    world.settle();
    let log = world.tabs[1].take_log();
    let taken = count(&log, |c| {
        matches!(c, Command::Keeper(ToKeeper::ContinueRun(_)))
    });
    let workers = count(&log, |c| matches!(c, Command::StartWorker(_)));
    assert_eq!((taken, workers), (1, 1), "two clicks on Continue: {log:?}");
    assert_eq!(world.tabs[1].view.state, RunState::Running);
}

#[test]
fn the_worker_killed_in_every_state_lets_the_run_go_and_the_card_hears_it() {
    // Every prefix of a card's run, from its ask to its finish, then the worker dies.
    let life = [
        (0, Move::CardStart),
        (0, Move::Land),
        (0, Move::Deliver),
        (0, Move::Deliver),
        (0, Move::Deliver),
        (0, Move::Land),
        (0, Move::Land),
        (0, Move::Land),
        (0, Move::Evaluate),
        (0, Move::Deliver),
        (0, Move::PauseOrResume),
        (0, Move::Deliver),
        (0, Move::Deliver),
        (0, Move::Land),
        (0, Move::PauseOrResume),
        (0, Move::Land),
        (0, Move::Deliver),
        (0, Move::Finish),
        (0, Move::Deliver),
    ];
    for cut in 0..=life.len() {
        let mut history = life[..cut].to_vec();
        let mut world = World::new();
        history.iter().for_each(|&(t, step)| world.play(t, step));
        if world.tabs[0].worker.is_none() {
            continue;
        }
        history.push((0, Move::Dies));
        let world = play(&history);
        let tab = &world.tabs[0];
        assert!(
            world.locks.held().is_empty(),
            "a lock kept after {history:?}"
        );
        assert_eq!(
            tab.cards.awaiting, None,
            "a card still waits after {history:?}"
        );
        // Once the run began, the card heard its end: its weights, or why not.
        if tab.cards.answers.iter().any(Result::is_ok) {
            assert_eq!(tab.cards.ends.len(), 1, "{history:?}: {:?}", tab.cards.ends);
        }
        // Before its finish was kept, the run ended with its worker: the card and the panel
        // hear the death, typed as it came.
        if let Some(Err(ended)) = tab.cards.ends.last() {
            let lost = RunFailure::WorkerLost(WorkerLoss::Died("it ran out of memory".into()));
            assert_eq!(ended, &RunEnded::Failed(lost.clone()), "{history:?}");
            assert_eq!(tab.view.failure, Some(lost), "{history:?}");
        }
    }
}

#[test]
fn a_card_s_run_whose_loss_diverges_ends_with_the_trainer_s_failure_and_its_words() {
    let world = play(&[
        (0, Move::CardStart),
        (0, Move::Land),
        (0, Move::Deliver),
        (0, Move::Deliver),
        (0, Move::Fails),
        (0, Move::Deliver),
        (0, Move::Deliver),
    ]);
    let tab = &world.tabs[0];
    let failure = RunFailure::Trainer(TrainerFailure::Diverged {
        step: 1,
        loss: NonFinite::Infinite,
        back_to: None,
    });
    assert_eq!(tab.view.failure, Some(failure.clone()));
    assert_eq!(tab.cards.ends, vec![Err(RunEnded::Failed(failure.clone()))]);
    // Typed up to here; the words are made where the panel and the card show them.
    let said = RunEnded::Failed(failure).to_string();
    assert!(
        said.starts_with("stopped: The loss became inf at step 1;")
            && said.ends_with("Nothing was saved before it, so the run is gone: start again."),
        "{said}"
    );
}

#[test]
fn an_ended_worker_is_not_heard() {
    let mut world = training();
    let old = world.tabs[0].worker.as_ref().unwrap().id;
    // Stopped, then continued from the runs table: a fresh worker; the old one's last words
    // come after.
    world.play(0, Move::Stop);
    world.settle();
    let run = world.tabs[0].keeper.current_id().unwrap();
    world.tabs[0].on(Event::CardContinue(run));
    world.settle();
    let tab = &mut world.tabs[0];
    assert_ne!(tab.worker.as_ref().unwrap().id, old);
    let state = tab.view.state;
    let stale = FromTrainer::State {
        state: RunState::Idle,
    };
    tab.on(Event::Worker(old, stale, None));
    tab.on(Event::WorkerLost(old, WorkerLoss::Died("gone".into())));
    assert_eq!(tab.view.state, state, "the old worker moved the panel");
    assert!(tab.session.has_worker());
}

#[test]
fn a_reset_while_the_start_is_being_kept_leaves_nothing_and_tells_the_card() {
    let mut world = World::new();
    world.play(0, Move::CardStart);
    world.play(0, Move::Reset);
    world.settle();
    let tab = &world.tabs[0];
    assert!(tab.worker.is_none(), "a worker started for a run let go");
    assert!(world.locks.held().is_empty());
    assert_eq!(run_now(world.store.records()).unwrap(), vec![]);
    assert!(
        matches!(&tab.cards.answers[..], [Err(StartError::LetGo(_))]),
        "{:?}",
        tab.cards.answers
    );
}

#[test]
fn a_card_asking_while_a_run_trains_hears_busy() {
    let mut world = training();
    world.play(0, Move::CardStart);
    assert_eq!(world.tabs[0].cards.answers, vec![Err(StartError::Busy)]);
}

/// A card's run training in tab 0, and what the session does when its keeping comes back as
/// `kept` (with `rest`).
fn card_run_kept(rest: Option<RunState>, kept: impl FnOnce(RunId) -> Kept) -> (Tab, Vec<Command>) {
    let mut world = World::new();
    world.play(0, Move::CardStart);
    world.settle();
    let run = world.tabs[0].keeper.current_id().unwrap();
    let page = world.tabs[0].page();
    let [mut tab, _] = world.tabs;
    let kept = kept(run);
    let event = Event::Kept {
        run,
        rest,
        checkpoint: true,
        kept,
    };
    let commands = tab.session.on(&mut tab.view, page, event);
    (tab, commands)
}

#[test]
fn a_keeping_another_tab_made_stale_stops_this_tab_and_its_card() {
    // The run moved on in another tab meanwhile: this tab's keeping is refused.
    let (tab, commands) = card_run_kept(None, |id| Kept::Moved(StoreError::Moved { id, step: 9 }));
    assert!(commands.contains(&Command::Send(ToTrainer::Reset, None)));
    assert!(
        commands.iter().any(|c| matches!(
            c,
            Command::EndCard(RunEnded::TakenOn(StoreError::Moved { step: 9, .. }))
        )),
        "{commands:?}"
    );
    assert_eq!(tab.view.state, RunState::Idle);
    let failure = tab.view.failure.as_ref().unwrap();
    assert!(
        matches!(
            failure,
            RunFailure::TakenOn(StoreError::Moved { step: 9, .. })
        ),
        "{failure:?}"
    );
    assert!(failure.to_string().contains("continued in another tab"));
}

#[test]
fn a_finish_that_could_not_be_kept_tells_the_card_and_says_so() {
    let full = |_| Kept::Refused(KeeperError::Store(StoreError::Full));
    let (tab, commands) = card_run_kept(Some(RunState::Finished), full);
    assert!(
        commands
            .iter()
            .any(|c| matches!(c, Command::EndCard(RunEnded::NotKept(_)))),
        "{commands:?}"
    );
    assert!(
        tab.view
            .notices
            .iter()
            .any(|n| n.message.contains("not kept"))
    );
    // The run rests as finished all the same.
    assert_eq!(tab.view.state, RunState::Finished);
}

#[test]
fn a_page_hidden_mid_keeping_keeps_at_once_and_loses_nothing() {
    let mut world = training();
    world.play(0, Move::Evaluate);
    world.play(0, Move::Evaluate);
    // The first evaluation's keeping is asked, not landed, when the page goes.
    world.play(0, Move::Deliver);
    world.play(0, Move::Hide);
    world.settle();
    let run = world.tabs[0].keeper.current_id().unwrap();
    let step = world.tabs[0].worker.as_ref().unwrap().step;
    assert_eq!(
        step_of(&run_now(world.store.checkpoint(run)).unwrap().unwrap()),
        step
    );
}

#[test]
fn deleting_the_tab_s_run_while_a_start_or_keeping_is_on_its_way_lets_everything_go() {
    for history in [
        vec![(0, Move::Train), (0, Move::Land), (0, Move::DeleteOwn)],
        vec![
            (0, Move::Train),
            (0, Move::Land),
            (0, Move::Deliver),
            (0, Move::DeleteOwn),
        ],
        vec![
            (0, Move::CardStart),
            (0, Move::Land),
            (0, Move::Deliver),
            (0, Move::Deliver),
            (0, Move::Deliver),
            (0, Move::Evaluate),
            (0, Move::Deliver),
            (0, Move::DeleteOwn),
        ],
    ] {
        let world = play(&history);
        assert!(world.locks.held().is_empty(), "{history:?}");
        assert_eq!(
            run_now(world.store.records()).unwrap(),
            vec![],
            "{history:?}"
        );
    }
}

/// Every sequence of `depth` moves from `moves` in tab 0 (and `1` where a move names the other
/// tab), from a run training in tab 0.
fn every_sequence(depth: usize, moves: &[(usize, Move)], from: &[(usize, Move)]) -> usize {
    let mut played = 0;
    let mut sequence = vec![0; depth];
    loop {
        let mut history = from.to_vec();
        history.extend(sequence.iter().map(|&i| moves[i]));
        play(&history);
        played += 1;
        let mut at = 0;
        loop {
            if at == depth {
                return played;
            }
            sequence[at] += 1;
            if sequence[at] < moves.len() {
                break;
            }
            sequence[at] = 0;
            at += 1;
        }
    }
}

#[test]
fn every_interleaving_of_four_moves_from_a_training_run_keeps_the_rules() {
    let moves: Vec<(usize, Move)> = MOVES
        .iter()
        .map(|&m| (0, m))
        .chain([
            (1, Move::ContinueOthers),
            (1, Move::Land),
            (1, Move::Deliver),
        ])
        .collect();
    // From a run in training, with nothing in flight; and from a start still being kept.
    let training = [
        (0, Move::Train),
        (0, Move::Land),
        (0, Move::Deliver),
        (0, Move::Deliver),
    ];
    let played =
        every_sequence(4, &moves, &training) + every_sequence(3, &moves, &[(0, Move::Train)]);
    println!("{played} interleavings played");
}

#[test]
fn long_random_interleavings_in_two_tabs_keep_the_rules() {
    let mut rng = SplitMix64::new(56);
    for _ in 0..3_000 {
        let mut history = Vec::new();
        for _ in 0..30 {
            let t = (rng.next_u64() % 2) as usize;
            let step = MOVES[(rng.next_u64() % MOVES.len() as u64) as usize];
            history.push((t, step));
        }
        play(&history);
    }
}
