//! Experiments as links: what a link sets, and what it cannot.

use vitlab::analysis::MapChoice;
use vitlab::model::{HeadsOff, Preset, Replacement};
use vitlab::protocol::BackendKind;
use vitlab::share::{Experiment, View};
use vitlab::train::TrainingPlan;

#[test]
fn a_link_gives_back_the_plan_seed_and_view_it_was_made_of() {
    let mut plan = TrainingPlan::in_page(Preset::Lab);
    let vit = plan.config.vit_mut().unwrap();
    (vit.depth, vit.heads) = (3, 4);
    plan.lr = 2.5e-4;
    plan.batch_size = 48;
    plan.seed = 7;
    plan.augment = false;
    let map = MapChoice::Head(2, 1);
    let heads_off = HeadsOff::new([(2, 3), (0, 0)], Replacement::Zero);
    let view = View { map, heads_off };
    let query = Experiment::query(
        &plan,
        (Some(BackendKind::Cpu), Some(3)),
        &view,
        Some("pretrained/vit seed.safetensors"),
    );
    assert!(
        query.contains("backend=cpu") && query.contains("map=head-3-2"),
        "{query}"
    );
    assert!(query.contains("cpu-workers=3"), "{query}");
    assert!(
        query.contains("off=1.1%2C3.4") && query.contains("off-by=zero"),
        "{query}"
    );
    assert!(
        query.contains("weights=pretrained%2Fvit+seed.safetensors"),
        "{query}"
    );
    let (read, problems) = Experiment::read_query(&format!("?{query}"));
    assert_eq!(problems, Vec::<String>::new());
    assert_eq!(read.plan, Some(plan.clone()));
    assert_eq!(read.map, Some(map));
    assert_eq!(read.heads_off, Some(view.heads_off));
    assert_eq!(read.cpu_workers, Some(3));

    // The seed preset's recipe (no warm-up) comes back as the seed's.
    let seed = TrainingPlan::in_page(Preset::Seed);
    let query = Experiment::query(&seed, (None, None), &View::default(), None);
    assert!(query.starts_with("preset=seed&"), "{query}");
    assert!(!query.contains("off"), "no heads off, no `off`: {query}");
    assert_eq!(Experiment::read_query(&query).0.plan, Some(seed));
}

#[test]
fn a_link_with_no_plan_leaves_the_form_alone() {
    let (read, problems) = Experiment::read_query("?backend=cpu&utm_source=mail");
    assert_eq!(read, Experiment::default());
    assert!(problems.is_empty());
    let (read, _) = Experiment::read_query("preset=lab");
    assert_eq!(read.plan, Some(TrainingPlan::in_page(Preset::Lab)));
}

#[test]
fn hostile_link_values_are_named_and_ignored_never_applied() {
    let huge = "9".repeat(10_000);
    let query = format!(
        "depth=abc&lr=NaN&epochs=0&seed=-1&augment=maybe&patch={huge}&map=head-999-1&preset=vgg&dim=64&heads=5"
    );
    let (read, problems) = Experiment::read_query(&query);
    assert_eq!(read.map, None);
    // dim 64 over 5 heads cannot run: the form keeps its own plan.
    assert_eq!(read.plan, None);
    assert_eq!(problems.len(), 5, "{problems:?}");
    assert_eq!(problems[4], "and 5 more");
    assert!(problems[0].starts_with("preset=vgg"), "{problems:?}");
    assert!(problems.iter().all(|p| p.len() < 200), "{problems:?}");

    // Each bad value alone: named, and the rest of the link still applies.
    for (bad, named) in [
        ("depth=abc", "depth=abc"),
        ("lr=inf", "lr=inf"),
        ("lr=-0.1", "lr=-0.1"),
        ("batch=0", "batch=0"),
        ("seed=18446744073709551616", "seed=1844"),
        ("augment=2", "augment=2"),
        ("map=layer-0", "map=layer-0"),
        (&format!("mlp={huge}"), "mlp=9999"),
        ("cpu-workers=0", "cpu-workers=0"),
        ("cpu-workers=9", "cpu-workers=9"),
        ("cpu-workers=two", "cpu-workers=two"),
    ] {
        let (read, problems) = Experiment::read_query(&format!("preset=seed&epochs=2&{bad}"));
        assert_eq!(problems.len(), 1, "{bad}: {problems:?}");
        assert!(
            problems[0].starts_with(named) && problems[0].ends_with("ignored"),
            "{problems:?}"
        );
        if bad.starts_with("cpu-workers") {
            assert_eq!(read.cpu_workers, None, "{bad}");
        }
        if !bad.starts_with("map") {
            assert_eq!(
                read.plan.map(|p| p.epochs),
                Some(2),
                "{bad}: the rest applies"
            );
        }
    }
    // A plan past the page's budget is refused as a whole, with the limit named.
    let (read, problems) = Experiment::read_query("depth=100000&dim=1024&heads=8&mlp=4096");
    assert_eq!(read.plan, None);
    assert!(problems[0].contains("cannot run"), "{problems:?}");
    // The same key twice: the last counts, and the page says so.
    let (read, problems) = Experiment::read_query("epochs=2&epochs=5");
    assert_eq!(read.plan.map(|p| p.epochs), Some(5));
    assert_eq!(problems.len(), 1, "{problems:?}");
}

#[test]
fn a_map_fits_only_models_that_have_it() {
    for map in [
        MapChoice::Rollout,
        MapChoice::LayerMean(5),
        MapChoice::Head(5, 7),
    ] {
        assert_eq!(MapChoice::from_param(&map.to_param()), Some(map));
        assert!(map.fits(6, 8));
    }
    assert!(!MapChoice::Head(5, 7).fits(6, 4));
    assert!(!MapChoice::LayerMean(6).fits(6, 8));
    assert_eq!(MapChoice::from_param("head-1"), None);
}

#[test]
fn a_link_carries_a_cnn_run_on_a_subset_and_refuses_vit_sizes_for_it() {
    let mut plan = TrainingPlan::in_page(Preset::Cnn);
    plan.train_limit = Some(1000);
    let link = Experiment::query(&plan, (None, None), &View::default(), None);
    assert!(
        link.contains("preset=cnn") && link.contains("images=1000"),
        "{link}"
    );
    assert!(!link.contains("depth="), "{link}");
    let (read, problems) = Experiment::read_query(&link);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(read.plan, Some(plan));
    let (_, problems) = Experiment::read_query("preset=cnn&depth=3");
    assert_eq!(problems.len(), 1, "{problems:?}");
}

#[test]
fn a_link_switches_heads_off_and_refuses_what_is_not_heads() {
    let (read, problems) = Experiment::read_query("off=2.3,1.1,2.3");
    assert!(problems.is_empty(), "{problems:?}");
    let off = read.heads_off.unwrap();
    assert_eq!(off.heads().collect::<Vec<_>>(), vec![(0, 0), (1, 2)]);
    assert_eq!(off.replacement, Replacement::Mean, "mean unless told");
    assert_eq!(off.toggled(1, 2).heads().collect::<Vec<_>>(), vec![(0, 0)]);
    assert!(off.toggled(4, 4).contains(4, 4));
    // A model of another shape keeps only the heads it has.
    let mut small = vitlab::model::VitConfig::seed();
    (small.depth, small.heads) = (2, 2);
    let wide = HeadsOff::new([(0, 0), (1, 2), (3, 1), (1, 1)], Replacement::Zero);
    assert!(!wide.fits(&small));
    let kept = wide.within(&small);
    assert_eq!(kept.heads().collect::<Vec<_>>(), vec![(0, 0), (1, 1)]);
    assert_eq!(kept.replacement, Replacement::Zero);
    assert!(kept.fits(&small));

    let many = vec!["1.1"; 5000].join(",");
    for (query, named) in [
        ("off=0.1", "off=0.1"),
        ("off=2-3", "off=2-3"),
        ("off=1.1,x", "off=1.1,x"),
        ("off=1.99999999999", "off=1.99999999999"),
        (&format!("off={many}")[..], "off=1.1,1.1"),
        ("off=1.1&off-by=half", "off-by=half"),
    ] {
        let (read, problems) = Experiment::read_query(query);
        assert_eq!(read.heads_off, None, "{query}");
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with(named) && p.ends_with("ignored")),
            "{query}: {problems:?}"
        );
    }
}
