//! A person's set kept a digit a record (`handwriting_store`): two tabs keep, relabel, delete,
//! delete all and read again in every interleaving, and what a fresh tab finds is exactly what
//! was done, whoever did it; the two sequences that lost digits when each tab wrote its whole
//! copy; hostile records read as hostile, never written over.

use std::cell::Cell;
use std::collections::BTreeMap;

use vitlab::data::IMAGE_PIXELS;
use vitlab::handwriting_store::memory::MemoryDigits;
use vitlab::handwriting_store::{
    DIGIT_BYTES, DigitBytesError, DigitId, DigitStoreError, KeptDigit, SetKeeper, digit_id,
};

use crate::run_now;

type Tab = SetKeeper<MemoryDigits>;

/// Fresh ids, in the order digits are kept.
struct Ids(Cell<u64>);

impl Ids {
    fn next(&self) -> DigitId {
        self.0.set(self.0.get() + 1);
        digit_id(1_700_000_000_000 + self.0.get(), self.0.get())
    }
}

fn digit(ids: &Ids, label: u8) -> KeptDigit {
    KeptDigit::new(ids.next(), [label * 20; IMAGE_PIXELS], label)
}

fn labels(tab: &Tab) -> Vec<u8> {
    tab.set().labels
}

fn fresh(store: &MemoryDigits) -> Vec<u8> {
    let tab = SetKeeper::new(store.clone());
    assert_eq!(run_now(tab.read()), Ok(0));
    labels(&tab)
}

#[test]
fn digits_kept_in_two_tabs_are_all_found_by_a_third() {
    let store = MemoryDigits::default();
    let ids = Ids(Cell::new(0));
    let (a, b) = (SetKeeper::new(store.clone()), SetKeeper::new(store.clone()));
    run_now(a.read()).unwrap();
    run_now(b.read()).unwrap();
    // A keeps 3, B keeps 2, A keeps 1 more: a third tab finds 6, not 4.
    for label in [1, 2, 3] {
        run_now(a.add(vec![digit(&ids, label)])).unwrap();
    }
    for label in [4, 5] {
        run_now(b.add(vec![digit(&ids, label)])).unwrap();
    }
    run_now(a.add(vec![digit(&ids, 6)])).unwrap();
    assert_eq!(fresh(&store), vec![1, 2, 3, 4, 5, 6]);
    // "Delete all" in A, then one digit kept in B: a fresh tab finds 1, not 4.
    run_now(a.delete_all()).unwrap();
    run_now(b.add(vec![digit(&ids, 7)])).unwrap();
    assert_eq!(fresh(&store), vec![7]);
}

#[test]
fn a_relabelling_of_a_digit_changed_elsewhere_is_refused_and_the_tab_reads_again() {
    let store = MemoryDigits::default();
    let ids = Ids(Cell::new(0));
    let (a, b) = (SetKeeper::new(store.clone()), SetKeeper::new(store.clone()));
    run_now(a.add(vec![digit(&ids, 1), digit(&ids, 2)])).unwrap();
    run_now(b.read()).unwrap();
    let (first, second) = (a.ids()[0], a.ids()[1]);
    run_now(b.relabel(first, 7)).unwrap();
    // A's copy says 1 at revision 1: its relabelling is refused, and it reads B's 7.
    let refused = run_now(a.relabel(first, 8));
    assert!(
        matches!(refused, Err(DigitStoreError::Moved(_))),
        "{refused:?}"
    );
    assert_eq!(labels(&a), vec![7, 2]);
    // Deleted in B: A's relabelling of it finds it gone.
    run_now(b.delete(second)).unwrap();
    let gone = run_now(a.relabel(second, 3));
    assert!(matches!(gone, Err(DigitStoreError::Gone(_))), "{gone:?}");
    assert_eq!(labels(&a), vec![7]);
    assert_eq!(fresh(&store), vec![7]);
}

#[test]
fn hostile_records_are_counted_left_as_they_are_and_never_block_the_rest() {
    let store = MemoryDigits::default();
    let ids = Ids(Cell::new(0));
    let kept = digit(&ids, 4);
    let hostile = [
        (ids.next(), vec![1, 2, 3]),
        (ids.next(), {
            let mut bytes = kept.to_bytes();
            bytes[0] = 11;
            bytes
        }),
    ];
    for (id, bytes) in &hostile {
        store.put_raw(*id, bytes.clone());
    }
    let tab = SetKeeper::new(store.clone());
    run_now(tab.add(vec![kept.clone()])).unwrap();
    assert_eq!(run_now(tab.read()), Ok(2));
    assert_eq!(labels(&tab), vec![4]);
    for (id, bytes) in &hostile {
        assert_eq!(store.raw(*id).as_ref(), Some(bytes), "never written over");
    }
    assert_eq!(
        KeptDigit::from_bytes(1, &[0; 3]),
        Err(DigitBytesError::Length(3))
    );
    assert_eq!(
        KeptDigit::from_bytes(1, &hostile[1].1),
        Err(DigitBytesError::Label(11))
    );
    assert_eq!(kept.to_bytes().len(), DIGIT_BYTES);
    assert_eq!(KeptDigit::from_bytes(kept.id, &kept.to_bytes()), Ok(kept));
}

#[test]
fn a_set_never_holds_more_than_a_set_may() {
    let store = MemoryDigits::default();
    let ids = Ids(Cell::new(0));
    let tab = SetKeeper::new(store.clone());
    let many: Vec<KeptDigit> = (0..vitlab::data::MAX_PERSONAL_DIGITS)
        .map(|i| digit(&ids, (i % 10) as u8))
        .collect();
    run_now(tab.add(many)).unwrap();
    // Another tab, whose copy is empty, still cannot pass the store's bound.
    let other = SetKeeper::new(store.clone());
    assert_eq!(
        run_now(other.add(vec![digit(&ids, 1)])),
        Err(DigitStoreError::TooMany)
    );
    assert_eq!(run_now(tab.read()), Ok(0));
    assert_eq!(tab.len(), vitlab::data::MAX_PERSONAL_DIGITS);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Add,
    Relabel,
    Delete,
    DeleteAll,
    Read,
}

const EVENTS: [Event; 5] = [
    Event::Add,
    Event::Relabel,
    Event::Delete,
    Event::DeleteAll,
    Event::Read,
];

/// Plays `history` on two tabs and checks, after each event, that the store holds exactly
/// what the changes the store took made, and that a tab that just read holds the store.
fn play(history: &[(usize, Event)]) {
    let store = MemoryDigits::default();
    let ids = Ids(Cell::new(0));
    let tabs = [SetKeeper::new(store.clone()), SetKeeper::new(store.clone())];
    // The truth: each digit's label, as the changes the store took leave it.
    let mut truth: BTreeMap<DigitId, u8> = BTreeMap::new();
    for (i, &(t, event)) in history.iter().enumerate() {
        let tab = &tabs[t];
        let label = (i % 10) as u8;
        match event {
            Event::Add => {
                let new = digit(&ids, label);
                let id = new.id;
                run_now(tab.add(vec![new])).unwrap();
                truth.insert(id, label);
            }
            Event::Relabel => {
                let id = tab.ids().first().copied();
                let relabelled = id.map(|id| run_now(tab.relabel(id, label)));
                match (id, relabelled.unwrap_or(Ok(()))) {
                    (Some(id), Ok(())) => {
                        truth.insert(id, label);
                    }
                    (_, Err(DigitStoreError::Moved(_) | DigitStoreError::Gone(_))) => {}
                    (None, Ok(())) => {}
                    (_, Err(error)) => panic!("{error}: {history:?}"),
                }
            }
            Event::Delete => {
                let id = tab.ids().first().copied();
                if let Some(id) = id {
                    run_now(tab.delete(id)).unwrap();
                    truth.remove(&id);
                }
            }
            Event::DeleteAll => {
                run_now(tab.delete_all()).unwrap();
                truth.clear();
            }
            Event::Read => {
                run_now(tab.read()).unwrap();
            }
        }
        let (stored, unreadable) =
            run_now(vitlab::handwriting_store::DigitStore::all(&store)).unwrap();
        assert_eq!(unreadable, 0);
        let stored: BTreeMap<DigitId, u8> = stored.iter().map(|d| (d.id, d.label)).collect();
        assert_eq!(stored, truth, "after {:?}", &history[..=i]);
        if event == Event::Read {
            assert_eq!(
                labels(tab),
                truth.values().copied().collect::<Vec<_>>(),
                "a tab that read holds the store: {:?}",
                &history[..=i]
            );
        }
    }
}

#[test]
fn every_interleaving_of_six_changes_in_two_tabs_keeps_what_was_done() {
    let moves: Vec<(usize, Event)> = (0..2)
        .flat_map(|tab| EVENTS.iter().map(move |&event| (tab, event)))
        .collect();
    let depth = 6;
    let total = moves.len().pow(depth);
    for mut n in 0..total {
        let mut history = Vec::with_capacity(depth as usize);
        for _ in 0..depth {
            history.push(moves[n % moves.len()]);
            n /= moves.len();
        }
        play(&history);
    }
}

/// A button acts on the digit it was drawn for, once: the gallery's × names its digit's id, so
/// the second press of a double-click (which lands on the × now under the pointer, or on the
/// same one again before the gallery is drawn anew) deletes nothing more, and Undo keeps the
/// digit again as it was. On 8dd4619 the gallery named a position: two presses deleted two
/// digits.
#[test]
fn a_delete_pressed_twice_deletes_one_digit_and_undo_brings_it_back() {
    let store = MemoryDigits::default();
    let ids = Ids(Cell::new(0));
    let tab = SetKeeper::new(store.clone());
    run_now(tab.add((1..=5).map(|label| digit(&ids, label)).collect())).unwrap();
    let newest = *tab.ids().last().unwrap();
    let deleted = run_now(tab.delete(newest)).unwrap();
    assert_eq!(deleted.as_ref().map(|d| d.label), Some(5));
    // The same button pressed again: nothing more goes.
    assert_eq!(run_now(tab.delete(newest)).unwrap(), None);
    assert_eq!(labels(&tab), vec![1, 2, 3, 4]);
    assert_eq!(fresh(&store), vec![1, 2, 3, 4]);
    // Undo: the digit again, under its own id, in its place.
    run_now(tab.add(vec![deleted.unwrap()])).unwrap();
    assert_eq!(labels(&tab), vec![1, 2, 3, 4, 5]);
    assert_eq!(*tab.ids().last().unwrap(), newest);
    assert_eq!(fresh(&store), vec![1, 2, 3, 4, 5]);
}
