//! The page's places and their addresses (`place`): every address reads back as written, and
//! a fragment that names no place (or a part of another place) opens the first place, never
//! an error.

use vitlab::place::{Address, Part, Place, StoryStep};

#[test]
fn every_place_and_part_reads_back_from_its_fragment() {
    for place in Place::ALL {
        let address = Address::of(place);
        assert_eq!(Address::read(&address.fragment()), address);
        assert_eq!(address.fragment(), format!("#{}", place.slug()));
        assert!(!place.lead().is_empty() && place.lead().split(' ').count() <= 25);
    }
    let mut parts = Part::EXPERIMENTS.to_vec();
    parts.extend(StoryStep::ALL.map(Part::Story));
    parts.push(Part::LearnMyHandwriting);
    for part in parts {
        let address = Address::part(part);
        assert_eq!(Address::read(&address.fragment()), address, "{part:?}");
        assert_eq!(Address::read(&address.fragment()[1..]), address);
    }
    assert_eq!(
        Address::read("#experiments/heads-matter"),
        Address::part(Part::HeadsMatter)
    );
    assert_eq!(
        Address::read("#draw/lens"),
        Address::part(Part::Story(StoryStep::Lens))
    );
}

#[test]
fn what_names_no_place_opens_the_first_and_a_foreign_part_is_dropped() {
    for fragment in [
        "", "#", "#nowhere", "#Train", "#train/", "#%74rain", "#draw/x",
    ] {
        let address = Address::read(fragment);
        if fragment.starts_with("#draw") {
            assert_eq!(address, Address::of(Place::Draw));
        } else if fragment == "#train/" {
            assert_eq!(address, Address::of(Place::Train));
        } else {
            assert_eq!(address, Address::default(), "{fragment}");
        }
    }
    assert_eq!(Address::default().place, Place::Draw);
    // A part of another place is not this place's.
    assert_eq!(
        Address::read("#train/heads-matter"),
        Address::of(Place::Train)
    );
    // Too long to be an address.
    let long = format!("#train/{}", "a".repeat(200));
    assert_eq!(Address::read(&long), Address::default());
}

#[test]
fn the_story_steps_go_in_order_and_stop_at_their_ends() {
    let steps = StoryStep::ALL;
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(step.number(), i + 1);
        if i + 1 < steps.len() {
            assert_eq!(step.next(), steps[i + 1]);
            assert_eq!(steps[i + 1].previous(), *step);
        }
    }
    assert_eq!(StoryStep::Head.next(), StoryStep::Head);
    assert_eq!(StoryStep::Input.previous(), StoryStep::Input);
}
