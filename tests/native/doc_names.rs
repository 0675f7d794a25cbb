//! The names the map and the docs give in `backticks` are the code's: a file name (`link.rs`,
//! `web/trainer/stepping.rs`, `scripts/stamp.sh`) names a file of the repository, and a
//! `Type::member` names a type of `src/` with that method, field or variant, and a type's name
//! alone (`Drawing`) names a type or variant of `src/` or one of [`OTHERS`]. A rename or a
//! removal that leaves a doc behind fails here with the doc and the name.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// Where the repository's own files are (not `target/`, `dist/` or `node_modules`).
const TREES: [&str; 8] = [
    "src",
    "tests",
    "www",
    "scripts",
    "tools",
    "pretrained",
    ".ci",
    "docs",
];
const EXTENSIONS: [&str; 11] = [
    ".rs",
    ".mjs",
    ".js",
    ".sh",
    ".py",
    ".html",
    ".toml",
    ".json",
    ".css",
    ".md",
    ".webmanifest",
];
/// The types and tools of others the docs name in backticks: every other name that looks like
/// a type is `src/`'s.
const OTHERS: [&str; 7] = [
    "Cargo",
    "MessageChannel",
    "RwSignal",
    "Store",
    "Trunk",
    "Type",
    "Vec",
];
/// Files the build writes, which the docs name.
const BUILT: [&str; 4] = [
    "worker_loader.js",
    "worker_fma_loader.js",
    "manifest.json",
    "sw.js",
];

pub(crate) fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "node_modules" && name != "target" && name != "output" && name != "pkg" {
                files_under(&path, out);
            }
        } else {
            out.push(path);
        }
    }
}

/// Every file of the repository, as paths relative to its root.
fn repository_files() -> Vec<String> {
    let mut files = Vec::new();
    for tree in TREES {
        files_under(&Path::new(ROOT).join(tree), &mut files);
    }
    let mut names: Vec<String> = files
        .iter()
        .map(|path| {
            let relative = path.strip_prefix(ROOT).expect("under the root");
            relative.to_string_lossy().replace('\\', "/")
        })
        .collect();
    for top in fs::read_dir(ROOT).unwrap().flatten() {
        if top.path().is_file() {
            names.push(top.file_name().to_string_lossy().into_owned());
        }
    }
    names
}

/// The docs that name the code: the map, the README, and `docs/`.
fn docs() -> Vec<(String, String)> {
    let mut paths = vec![
        PathBuf::from(ROOT).join("ARCHITECTURE.md"),
        PathBuf::from(ROOT).join("README.md"),
    ];
    let mut docs = Vec::new();
    files_under(&Path::new(ROOT).join("docs"), &mut docs);
    paths.extend(
        docs.into_iter()
            .filter(|path| path.extension().is_some_and(|e| e == "md")),
    );
    paths
        .into_iter()
        .map(|path| {
            let text = fs::read_to_string(&path).unwrap();
            (path.strip_prefix(ROOT).unwrap().display().to_string(), text)
        })
        .collect()
}

/// What `text` holds in backticks.
fn quoted(text: &str) -> BTreeSet<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

fn is_file_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c))
        && EXTENSIONS.iter().any(|extension| name.ends_with(extension))
        && !name.starts_with('.')
        && !name.contains("..")
        // A path of the person's machine or a pattern, not one of the repository.
        && !name.starts_with('/')
        && !name.contains("*")
}

fn is_identifier(word: &str) -> bool {
    word.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `Type::member` in a quote (the rest of it, a call or a path on, ignored).
fn type_and_member(quote: &str) -> Option<(&str, &str)> {
    let (head, rest) = quote.split_once("::")?;
    let member = rest
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()?;
    let starts_upper = head.chars().next().is_some_and(|c| c.is_ascii_uppercase());
    (starts_upper && is_identifier(head) && is_identifier(member)).then_some((head, member))
}

/// The type a quote names, alone or before a member: `Drawing`, `LabView::map` (a name in
/// capitals, `FMA`, is a constant or an acronym, not a type).
fn type_named(quote: &str) -> Option<&str> {
    let head = quote.split("::").next()?;
    let starts_upper = head.chars().next().is_some_and(|c| c.is_ascii_uppercase());
    let has_lower = head.chars().any(|c| c.is_ascii_lowercase());
    (starts_upper && has_lower && is_identifier(head)).then_some(head)
}

/// Whether `word` stands alone at `at` in `text` (no identifier character either side).
fn whole_word_at(text: &str, at: usize, word: &str) -> bool {
    let before = text[..at].chars().next_back();
    let after = text[at + word.len()..].chars().next();
    let part = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    !part(before) && !part(after)
}

fn words_at<'a>(text: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    text.match_indices(word)
        .map(|(at, _)| at)
        .filter(move |&at| whole_word_at(text, at, word))
}

/// Whether `source` defines `name` (a struct, enum, trait or type alias) or implements it.
fn defines_or_implements(source: &str, name: &str) -> bool {
    words_at(source, name).any(|at| {
        let line_start = source[..at].rfind('\n').map_or(0, |n| n + 1);
        let before = source[line_start..at].trim_start();
        [
            "pub struct ",
            "struct ",
            "pub enum ",
            "enum ",
            "pub trait ",
            "trait ",
            "pub type ",
            "type ",
        ]
        .iter()
        .any(|keyword| before.ends_with(keyword) && !before.contains('('))
            || before.starts_with("impl")
            || before.starts_with("pub(crate) struct ")
            || before.starts_with("pub(crate) enum ")
            || before.starts_with("pub(super) struct ")
            || before.starts_with("pub(super) enum ")
    })
}

/// Whether `source` has `member` as a function, a field, a variant or a constant.
fn has_member(source: &str, member: &str) -> bool {
    words_at(source, member).any(|at| {
        let before = source[..at].trim_end();
        let line_start = source[..at].rfind('\n').map_or(0, |n| n + 1);
        let starts_line = source[line_start..at].trim().is_empty();
        let after = &source[at + member.len()..];
        let next = after.trim_start_matches([' ', '\t']);
        before.ends_with("fn")
            || before.ends_with("const")
            || next.starts_with(':') && !next.starts_with("::")
            // A variant: first on its line, then its fields, a comma or the line's end.
            || starts_line && (next.starts_with(['(', '{', ',']) || next.starts_with('\n'))
    })
}

#[test]
fn the_files_the_docs_name_are_there() {
    let files = repository_files();
    let mut stale = Vec::new();
    for (doc, text) in docs() {
        for name in quoted(&text).into_iter().filter(|q| is_file_name(q)) {
            // A path is read from the root or from where the doc's list stands (`src/`,
            // `web/`), a bare name from any folder.
            let found = BUILT.contains(&name)
                || files
                    .iter()
                    .any(|file| file == name || file.ends_with(&format!("/{name}")));
            if !found {
                stale.push(format!("{doc}: `{name}`"));
            }
        }
    }
    assert!(stale.is_empty(), "names no file:\n{}", stale.join("\n"));
}

/// Every source file of `src/`, as text.
fn sources() -> Vec<String> {
    let mut paths = Vec::new();
    files_under(&Path::new(ROOT).join("src"), &mut paths);
    paths
        .iter()
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .map(|path| fs::read_to_string(path).unwrap())
        .collect()
}

#[test]
fn the_members_the_docs_name_are_there() {
    let sources = sources();
    let mut stale = Vec::new();
    for (doc, text) in docs() {
        for (name, member) in quoted(&text).into_iter().filter_map(type_and_member) {
            let homes: Vec<&String> = sources
                .iter()
                .filter(|source| defines_or_implements(source, name))
                .collect();
            // A type of another crate (`Tensor::from_data`, `WebAssembly::validate`) is theirs.
            if homes.is_empty() {
                continue;
            }
            if !homes.iter().any(|source| has_member(source, member)) {
                stale.push(format!("{doc}: `{name}::{member}`"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "names nothing in src/:\n{}",
        stale.join("\n")
    );
}

#[test]
fn the_types_the_docs_name_are_there() {
    let sources = sources();
    let mut stale = BTreeSet::new();
    for (doc, text) in docs() {
        for name in quoted(&text).into_iter().filter_map(type_named) {
            let known = OTHERS.contains(&name)
                || sources
                    .iter()
                    .any(|source| defines_or_implements(source, name) || has_member(source, name));
            if !known {
                stale.insert(format!("{doc}: `{name}`"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "names no type of src/ (another crate's goes in OTHERS):\n{}",
        stale.into_iter().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn a_stale_name_is_caught() {
    let source = "pub struct LabState {\n    pub model_input: u8,\n}\nimpl LabState {\n    pub fn show(self) {}\n}\npub enum Said {\n    /// Why.\n    Refused { why: u8 },\n    Gone,\n}\n";
    assert!(defines_or_implements(source, "LabState"));
    assert!(has_member(source, "model_input"));
    assert!(has_member(source, "show"));
    assert!(!has_member(source, "input"));
    assert!(has_member(source, "Refused") && has_member(source, "Gone"));
    assert!(!has_member(source, "Why"));
    assert_eq!(
        type_and_member("LabState::input"),
        Some(("LabState", "input"))
    );
    assert_eq!(type_and_member("web::fetch_weights"), None);
    assert_eq!(type_named("LabState::input"), Some("LabState"));
    assert_eq!(type_named("Drawing"), Some("Drawing"));
    assert_eq!(type_named("FMA"), None);
    assert_eq!(type_named("web::Engine"), None);
    assert!(is_file_name("web/trainer/stepping.rs") && !is_file_name("*.test.mjs"));
}
