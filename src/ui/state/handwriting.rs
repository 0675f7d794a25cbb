//! A person's own digits, as the page holds them: its copy of the set
//! ([`crate::handwriting_store::SetKeeper`]) over the browser's database, a digit a record
//! ([`PersonalDb`]), read once before the first change and again whenever another tab changes
//! it (it says so on a `BroadcastChannel`) or the tab is shown again. Each change is one
//! transaction on one digit: two tabs never write over each other. Without a database the set
//! is kept in memory until the page closes.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::{LocalBoxFuture, Shared};
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;

use crate::data::{IMAGE_PIXELS, MAX_PERSONAL_DIGITS, PersonalSet, PersonalSetError};
use crate::handwriting_store::memory::MemoryDigits;
use crate::handwriting_store::{
    DigitId, DigitStore, DigitStoreError, KeptDigit, SetKeeper, digit_id,
};
use crate::web::DatabaseNotice;
use crate::web::personal_db::{OldSetUnreadable, PersonalDb};

/// The channel every tab of the page says "the set changed" on.
const CHANNEL: &str = "vitlab-personal";

/// A change to the set, refused with a reason.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChangeError {
    #[error("the imported files are not a set: {0}")]
    Import(#[from] PersonalSetError),
    #[error("the import would make {0} digits, more than the {MAX_PERSONAL_DIGITS} a set holds")]
    ImportTooLarge(usize),
    #[error(transparent)]
    Store(#[from] DigitStoreError),
}

/// Where the set is kept: the browser's database, or memory where there is none.
#[derive(Clone)]
enum PageDigits {
    Db(PersonalDb),
    Memory(MemoryDigits),
}

impl DigitStore for PageDigits {
    async fn all(&self) -> Result<(Vec<KeptDigit>, usize), DigitStoreError> {
        match self {
            Self::Db(db) => db.all().await,
            Self::Memory(memory) => memory.all().await,
        }
    }
    async fn add(&self, digits: &[KeptDigit]) -> Result<(), DigitStoreError> {
        match self {
            Self::Db(db) => db.add(digits).await,
            Self::Memory(memory) => memory.add(digits).await,
        }
    }
    async fn relabel(&self, id: DigitId, base: u32, label: u8) -> Result<u32, DigitStoreError> {
        match self {
            Self::Db(db) => db.relabel(id, base, label).await,
            Self::Memory(memory) => memory.relabel(id, base, label).await,
        }
    }
    async fn delete(&self, id: DigitId) -> Result<(), DigitStoreError> {
        match self {
            Self::Db(db) => db.delete(id).await,
            Self::Memory(memory) => memory.delete(id).await,
        }
    }
    async fn delete_all(&self) -> Result<(), DigitStoreError> {
        match self {
            Self::Db(db) => db.delete_all().await,
            Self::Memory(memory) => memory.delete_all().await,
        }
    }
}

type Keeper = SetKeeper<PageDigits>;

/// The reading of the set kept, shared by every caller that waits for it.
type Loading = Shared<LocalBoxFuture<'static, ()>>;

/// The channel the other tabs speak on, and what hears them.
type Heard = (
    web_sys::BroadcastChannel,
    Closure<dyn FnMut(web_sys::MessageEvent)>,
);

/// The page's listeners: another tab's word that the set changed, and the tab shown again.
struct Listening {
    channel: Option<Heard>,
    _shown: Option<gloo_events::EventListener>,
}

/// What went wrong with the person's set, typed until the card shows it beside the set.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SetNote {
    /// The database has something to say (another tab holds or needs it).
    #[error("Your digits: {0}.")]
    Database(DatabaseNotice),
    /// The database could not be opened or read: the set is kept in memory meanwhile.
    #[error("{0}")]
    Unread(DigitStoreError),
    /// A set an older page kept could not be moved into digits; it is left as it was.
    #[error("{0}")]
    OldSet(OldSetUnreadable),
    /// Records kept that did not read as digits, left as they are.
    #[error("{0} records kept in this browser are not digits; they are left as they were")]
    NotDigits(usize),
    /// A change was refused.
    #[error("{0}.")]
    Refused(DigitStoreError),
}

/// The person's set, shared by the lab's cards through context.
#[derive(Clone, Copy)]
pub struct Handwriting {
    /// The set now.
    pub set: RwSignal<Arc<PersonalSet>>,
    /// The id of each digit of `set`, in its order: what the gallery's buttons name.
    pub ids: RwSignal<Arc<Vec<DigitId>>>,
    /// What went wrong last, to show beside the set; none once a change is kept.
    pub problem: RwSignal<Option<SetNote>>,
    /// Whether the set kept in the browser has been read.
    pub loaded: RwSignal<bool>,
    keeper: StoredValue<Option<Keeper>, LocalStorage>,
    loading: StoredValue<Option<Loading>, LocalStorage>,
    listening: StoredValue<Option<Listening>, LocalStorage>,
    /// Records kept that did not read as digits (left as they are), said beside the set.
    unreadable: StoredValue<Option<SetNote>>,
}

impl Default for Handwriting {
    fn default() -> Self {
        Self::new()
    }
}

impl Handwriting {
    pub fn new() -> Self {
        Self {
            set: RwSignal::new(Arc::new(PersonalSet::default())),
            ids: RwSignal::new(Arc::new(Vec::new())),
            problem: RwSignal::new(None),
            loaded: RwSignal::new(false),
            keeper: StoredValue::new_local(None),
            loading: StoredValue::new_local(None),
            listening: StoredValue::new_local(None),
            unreadable: StoredValue::new(None),
        }
    }

    /// Reads the set kept in the browser, once (moving a set an older page kept into digits
    /// first); a call while it is read waits for the same reading.
    pub async fn load(self) {
        let loading = match self.loading.get_value() {
            Some(loading) => loading,
            None => {
                let loading = self.open().boxed_local().shared();
                self.loading.set_value(Some(loading.clone()));
                loading
            }
        };
        loading.await;
    }

    async fn open(self) {
        let problem = self.problem;
        let said = std::rc::Rc::new(move |notice: DatabaseNotice| {
            problem.set(Some(SetNote::Database(notice)));
        });
        let store = match PersonalDb::open(said).await {
            Ok(db) => {
                match db.move_old_set(js_sys::Date::now() as u64).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(unreadable)) => {
                        self.unreadable.set_value(Some(SetNote::OldSet(unreadable)))
                    }
                    Err(error) => self.problem.set(Some(SetNote::Unread(error))),
                }
                PageDigits::Db(db)
            }
            Err(error) => {
                self.problem.set(Some(SetNote::Unread(error)));
                PageDigits::Memory(MemoryDigits::default())
            }
        };
        let keeper = SetKeeper::new(store);
        self.keeper.set_value(Some(keeper.clone()));
        self.read_again(&keeper).await;
        self.listen();
        self.loaded.set(true);
    }

    /// Reads the set as stored into the page's copy.
    async fn read_again(self, keeper: &Keeper) {
        match keeper.read().await {
            Ok(unreadable) => {
                let said = (unreadable > 0).then_some(SetNote::NotDigits(unreadable));
                self.problem.set(self.unreadable.get_value().or(said));
            }
            Err(error) => self.problem.set(Some(SetNote::Unread(error))),
        }
        self.show(keeper);
    }

    /// The page's copy of the set as `keeper` has it.
    fn show(self, keeper: &Keeper) {
        self.set.set(Arc::new(keeper.set()));
        self.ids.set(Arc::new(keeper.ids()));
    }

    /// Hears the other tabs' changes, and the tab shown again: the set is read again.
    fn listen(self) {
        let reread = move || {
            if let Some(keeper) = self.keeper.get_value() {
                spawn_local(async move { self.read_again(&keeper).await });
            }
        };
        let channel = web_sys::BroadcastChannel::new(CHANNEL).ok().map(|channel| {
            let heard = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |_| reread());
            channel.set_onmessage(Some(heard.as_ref().unchecked_ref()));
            (channel, heard)
        });
        let shown = web_sys::window()
            .and_then(|window| window.document())
            .map(|document| {
                let seen = document.clone();
                gloo_events::EventListener::new(&document, "visibilitychange", move |_| {
                    if seen.visibility_state() == web_sys::VisibilityState::Visible {
                        reread();
                    }
                })
            });
        self.listening.set_value(Some(Listening {
            channel,
            _shown: shown,
        }));
    }

    /// Tells the other tabs the set changed.
    fn tell_the_others(self) {
        self.listening.with_value(|listening| {
            if let Some((channel, _)) = listening.as_ref().and_then(|l| l.channel.as_ref()) {
                let _ = channel.post_message(&wasm_bindgen::JsValue::from_str("changed"));
            }
        });
    }

    /// Runs `change` on the page's copy and the store once the set kept is read; the copy
    /// shown follows, the other tabs are told, and a refusal is said (and returned). What the
    /// change gives back, or its default where there is no set to change.
    async fn change<T: Default, F>(self, change: impl FnOnce(Keeper) -> F) -> Result<T, ChangeError>
    where
        F: std::future::Future<Output = Result<T, DigitStoreError>>,
    {
        self.load().await;
        let Some(keeper) = self.keeper.get_value() else {
            return Ok(T::default());
        };
        let done = change(keeper.clone()).await;
        self.show(&keeper);
        match &done {
            Ok(_) => {
                self.problem.set(self.unreadable.get_value());
                self.tell_the_others();
            }
            Err(error) => self.problem.set(Some(SetNote::Refused(error.clone()))),
        }
        done.map_err(ChangeError::from)
    }

    /// `image` (the model's input) joins the set as `label`.
    pub async fn add(self, image: &[u8], label: u8) -> Result<(), ChangeError> {
        let image: [u8; IMAGE_PIXELS] = image.try_into().expect("the model's input is 28×28");
        let digit = KeptDigit::new(fresh_id(0), image, label);
        self.change(|keeper| async move { keeper.add(vec![digit]).await })
            .await?;
        self.ask_to_keep();
        Ok(())
    }

    /// The browser is asked, once a digit is kept, not to clear the page's storage under
    /// pressure (the runs ask the same once one is kept: one question a page).
    fn ask_to_keep(self) {
        spawn_local(async {
            crate::web::ask_to_persist().await;
        });
    }

    /// Digit `id` is `label`.
    pub fn relabel(self, id: DigitId, label: u8) {
        spawn_local(async move {
            let _ = self
                .change(|keeper| async move { keeper.relabel(id, label).await })
                .await;
        });
    }

    /// Digit `id` goes, and from every run that keeps it (a fine-tuning's checkpoint): the
    /// digit deleted (for an Undo, which brings back the digit, not those checkpoints) with
    /// what became of those runs, or `None` where it was gone already (a second press of its
    /// button).
    pub async fn delete(
        self,
        id: DigitId,
        runs: super::RunKeeper,
        training: super::Training,
    ) -> Result<Option<(KeptDigit, Option<String>)>, ChangeError> {
        let deleted = self
            .change(|keeper| async move { keeper.delete(id).await })
            .await?;
        let Some(digit) = deleted else {
            return Ok(None);
        };
        let said = Self::forget_in_runs(runs, training, Some(&digit.image)).await;
        Ok(Some((digit, said)))
    }

    /// A deleted `digit` kept again, as it was (Undo).
    pub async fn restore(self, digit: KeptDigit) -> Result<(), ChangeError> {
        self.change(|keeper| async move { keeper.add(vec![digit]).await })
            .await
    }

    /// Every digit kept goes, the other tabs' too, and from every run that keeps them (a
    /// fine-tuning's checkpoint): what became of those runs, said in a sentence, if any did.
    pub async fn delete_all(
        self,
        runs: super::RunKeeper,
        training: super::Training,
    ) -> Result<Option<String>, ChangeError> {
        self.change(|keeper| async move { keeper.delete_all().await })
            .await?;
        Ok(Self::forget_in_runs(runs, training, None).await)
    }

    /// The deleted digits (or the one `digit`) go from every run that keeps them; the
    /// training panel stops the one it trains on them. What became of those runs, if any
    /// kept them.
    async fn forget_in_runs(
        runs: super::RunKeeper,
        training: super::Training,
        digit: Option<&[u8]>,
    ) -> Option<String> {
        let fates = match runs.forget_digits(digit).await {
            Ok(fates) => fates,
            Err(error) => {
                return Some(format!(
                    "The runs that fine-tuned on your digits could not be read ({error}): delete those from the runs table."
                ));
            }
        };
        for (run, fate) in &fates {
            if *fate == Ok(crate::run_store::DigitsForgotten::LetGoHere) {
                training.digits_deleted(*run);
            }
        }
        crate::run_store::said_of_forgotten(&fates, digit.is_some())
    }

    /// The digits of MNIST's two gzip files (in either order) added after the set's own, in
    /// one transaction; how many came.
    pub async fn import(self, first: &[u8], second: &[u8]) -> Result<usize, ChangeError> {
        let imported = PersonalSet::from_either_idx_gz(first, second)?;
        let count = imported.len();
        let total = self
            .set
            .with_untracked(|set| set.len())
            .saturating_add(count);
        if total > MAX_PERSONAL_DIGITS {
            return Err(ChangeError::ImportTooLarge(total));
        }
        let digits: Vec<KeptDigit> = imported
            .images
            .iter()
            .zip(&imported.labels)
            .enumerate()
            .map(|(i, (image, &label))| KeptDigit::new(fresh_id(i as u64), *image, label))
            .collect();
        self.change(|keeper| async move { keeper.add(digits).await })
            .await?;
        self.ask_to_keep();
        Ok(count)
    }
}

/// A fresh id for a digit kept now, the `nth` of a batch: the batch's ids keep its order.
fn fresh_id(nth: u64) -> DigitId {
    let now = js_sys::Date::now() as u64;
    let random = (js_sys::Math::random() * 1024.0) as u64;
    // A millisecond for each 1,024 of a batch, and its place in the low bits, so that two
    // tabs keeping in one millisecond still draw apart (and a batch's digits never collide).
    match nth {
        0 => digit_id(now, random),
        n => digit_id(now + 1 + (n >> 10), n),
    }
}
