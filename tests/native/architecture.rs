//! The map's rules on dependencies (`ARCHITECTURE.md`), checked on the sources, which the
//! native build cannot check for `ui` and `web` (they compile for wasm32 only): the modules'
//! imports form no cycle, the pure modules name neither `web` nor `ui`, `web` names neither
//! `ui` nor Leptos, `ui/state` imports no component, and `ui/widgets` nothing else of `ui`.
//! `ui` and `web` count a file or folder at a time (`ui::lab`, `web::drawing`), every other
//! module whole; a path through a facade (`crate::web::Engine`) counts as an import of the
//! module that defines it (`web::engine`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The modules that know the browser, counted a part at a time, and those only the native
/// build has.
const BROWSER: [&str; 2] = ["ui", "web"];
const NATIVE_ONLY: [&str; 2] = ["native", "launch_count"];

/// A source file of the library: its module path and its text.
struct Source {
    module: Vec<String>,
    text: String,
}

/// Every file of the library (not the binaries: `main.rs`, `bin/`), as its module path.
fn library() -> Vec<Source> {
    let src = Path::new(ROOT).join("src");
    let mut paths = Vec::new();
    crate::doc_names::files_under(&src, &mut paths);
    paths
        .into_iter()
        .filter_map(|path| {
            let relative = path.strip_prefix(&src).ok()?.to_string_lossy().into_owned();
            let mut module: Vec<String> = relative
                .strip_suffix(".rs")?
                .split(['/', '\\'])
                .map(str::to_string)
                .collect();
            if module.len() > 1 && module.last().is_some_and(|last| last == "mod") {
                module.pop();
            }
            let top = module[0].as_str();
            (top != "bin" && top != "main" && top != "lib").then(|| Source {
                module,
                text: fs::read_to_string(&path).unwrap(),
            })
        })
        .collect()
}

/// The text's code, without its comments.
fn code(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifiers of the path that starts at `rest` (`a::b::C` → a, b, C).
fn path_at(rest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = rest;
    loop {
        let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        out.push(rest[..end].to_string());
        match rest[end..].strip_prefix("::") {
            Some(next) => rest = next,
            None => break,
        }
    }
    out
}

/// The crate paths `source` names: `crate::…` as it is, `super::…` resolved against its
/// module.
fn named_paths(source: &Source) -> Vec<Vec<String>> {
    let text = code(&source.text);
    let mut out = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| is_ident(c) || c == '$' || c == ':') {
            continue;
        }
        out.push(path_at(&text[at + "crate::".len()..]));
    }
    for (at, _) in text.match_indices("super::") {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| is_ident(c) || c == ':') {
            continue;
        }
        let mut rest = &text[at..];
        // A folder's `mod.rs` is its module: its `super` is the folder's parent, as a file's
        // `super` is its folder.
        let mut base = source.module.clone();
        while let Some(next) = rest.strip_prefix("super::") {
            base.pop();
            rest = next;
        }
        base.extend(path_at(rest));
        out.push(base);
    }
    out
}

/// What each facade (`ui/mod.rs`, `web/mod.rs`) re-exports from which of its parts.
fn reexports(sources: &[Source]) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for facade in BROWSER {
        let Some(source) = sources
            .iter()
            .find(|s| s.module.len() == 1 && s.module[0] == facade)
        else {
            continue;
        };
        let text = code(&source.text);
        let mut names = BTreeMap::new();
        for (at, _) in text.match_indices("pub use ") {
            let statement = &text[at + "pub use ".len()..];
            let statement = &statement[..statement.find(';').unwrap_or(statement.len())];
            let Some((part, items)) = statement.split_once("::") else {
                continue;
            };
            let items = items.trim_start_matches('{').trim_end_matches('}');
            for item in items.split(',') {
                let name = item.trim().rsplit(' ').next().unwrap_or("").to_string();
                if !name.is_empty() {
                    names.insert(name, part.trim().to_string());
                }
            }
        }
        out.insert(facade.to_string(), names);
    }
    out
}

/// The part of the library `path` belongs to, if it is the library's.
fn part_of(
    path: &[String],
    modules: &BTreeSet<String>,
    parts: &BTreeSet<String>,
    facades: &BTreeMap<String, BTreeMap<String, String>>,
) -> Option<String> {
    let top = path.first()?;
    if !modules.contains(top) {
        return None;
    }
    if !BROWSER.contains(&top.as_str()) {
        return Some(top.clone());
    }
    let Some(second) = path.get(1) else {
        return Some(top.clone());
    };
    let part = format!("{top}::{second}");
    if parts.contains(&part) {
        return Some(part);
    }
    match facades.get(top).and_then(|names| names.get(second)) {
        Some(defined_in) => Some(format!("{top}::{defined_in}")),
        None => Some(top.clone()),
    }
}

/// Which part imports which.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let sources = library();
    let modules: BTreeSet<String> = sources.iter().map(|s| s.module[0].clone()).collect();
    let parts: BTreeSet<String> = sources
        .iter()
        .filter(|s| s.module.len() > 1 && BROWSER.contains(&s.module[0].as_str()))
        .map(|s| format!("{}::{}", s.module[0], s.module[1]))
        .collect();
    let facades = reexports(&sources);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for source in &sources {
        let Some(from) = part_of(&source.module, &modules, &parts, &facades) else {
            continue;
        };
        let entry = graph.entry(from.clone()).or_default();
        for path in named_paths(source) {
            if let Some(to) = part_of(&path, &modules, &parts, &facades)
                && to != from
            {
                entry.insert(to);
            }
        }
    }
    graph
}

/// A cycle of `graph`, if it has one.
fn a_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, done, path) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

fn top(part: &str) -> &str {
    part.split("::").next().unwrap()
}

#[test]
fn the_library_s_imports_form_no_cycle() {
    let graph = imports();
    // The map is read from the sources: a walk that found nothing would pass anything.
    assert!(graph["ui::lab"].contains("ui::state"), "{graph:#?}");
    assert!(graph["tab_session"].contains("run_store"), "{graph:#?}");
    assert!(graph["web::drawing"].contains("web::asker"), "{graph:#?}");
    if let Some(cycle) = a_cycle(&graph) {
        panic!("an import cycle: {}", cycle.join(" → "));
    }
}

#[test]
fn the_pure_modules_know_no_browser_and_web_knows_no_page() {
    for (from, to) in imports() {
        let from_top = top(&from);
        for to in to {
            let to_top = top(&to);
            if !BROWSER.contains(&from_top) {
                assert!(
                    !BROWSER.contains(&to_top),
                    "{from} (pure) imports {to}: the browser half belongs in web or ui"
                );
            }
            if !NATIVE_ONLY.contains(&from_top) {
                assert!(
                    !NATIVE_ONLY.contains(&to_top),
                    "{from} imports {to}, which the browser's build has not"
                );
            }
            if from_top == "web" {
                assert_ne!(to_top, "ui", "{from} imports {to}: web knows no component");
            }
        }
    }
    for source in library() {
        if source.module[0] == "web" {
            assert!(
                !code(&source.text).contains("leptos"),
                "web/{} uses Leptos",
                source.module[1..].join("/")
            );
        }
    }
}

#[test]
fn the_services_import_no_component_and_the_widgets_nothing_of_the_page() {
    let graph = imports();
    let ui_parts = |part: &str| -> Vec<String> {
        graph
            .get(part)
            .into_iter()
            .flatten()
            .filter(|to| top(to) == "ui")
            .cloned()
            .collect()
    };
    assert_eq!(
        ui_parts("ui::state"),
        vec!["ui::widgets".to_string()],
        "ui/state asks only the widgets' helpers of the rest of ui"
    );
    assert_eq!(ui_parts("ui::widgets"), Vec::<String>::new());
}
