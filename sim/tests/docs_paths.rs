//! Every repository path the docs name exists: a backticked token in ARCHITECTURE.md, the
//! README or `docs/*.md` that starts with one of the repository's top-level folders
//! (`sim/src/cmd/`, `readpath/planner/src/reader/mod.rs`, `scripts/test-all`) must be there.
//! Paths of other projects (ClickHouse's `src/Processors/...`) do not start with one of ours.
//! "There" means tracked by git, as on a fresh clone: a file a local run left behind (the fuzzer's
//! `artifacts/`) does not count, so this test fails here when it would fail in CI.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;
use common::repo;

/// Paths the docs cite in other projects' repositories that happen to start like ours.
const FOREIGN: &[(&str, &str)] = &[
    (
        "docs/superpowers/specs/2026-08-27-parquet-readpath-redesign.md",
        "Altinity/ClickHouse: the redesign's notes",
    ),
    ("docs/TIGER_STYLE.md", "TigerBeetle's style guide"),
    (
        "docs/book/src/contributing/architecture.md",
        "rust-analyzer's ARCHITECTURE example",
    ),
    ("tests/util.rs", "quinn's test helpers, a style example"),
];

/// Paths the docs name that a tool writes when it runs, so no clone holds them.
const GENERATED: &[(&str, &str)] =
    &[("fuzz/artifacts/", "cargo fuzz writes a failing input there")];

/// The files git tracks, relative to the repository root.
fn tracked_files() -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(repo())
        .output()
        .expect("git ls-files runs (the test needs git and a checkout)");
    assert!(out.status.success(), "git ls-files failed: {out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// `path` is a tracked file, or a folder (with or without a trailing `/`) holding one.
fn is_tracked(path: &str, tracked: &[String]) -> bool {
    let dir = format!("{}/", path.trim_end_matches('/'));
    tracked.iter().any(|t| t == path || t.starts_with(&dir))
}

fn top_level_dirs() -> Vec<String> {
    std::fs::read_dir(repo())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| !n.starts_with('.') && n != "target")
        .collect()
}

/// The backticked tokens of `text` that look like paths under one of `tops`.
fn named_paths(text: &str, tops: &[String]) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|t| {
            // `path:line`, `path::item` and globs name the path before them.
            let t = t.split([':', '*', ' ', '{', '\n']).next().unwrap_or("");
            let first = t.split('/').next().unwrap_or("");
            (t.contains('/') && tops.iter().any(|d| d == first)).then(|| t.to_string())
        })
        .collect()
}

#[test]
fn every_path_the_docs_name_exists() {
    let root = repo();
    let tops = top_level_dirs();
    let mut docs = vec![root.join("ARCHITECTURE.md"), root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            docs.push(p);
        }
    }
    let tracked = tracked_files();
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        for p in named_paths(&text, &tops) {
            checked += 1;
            let listed = FOREIGN.iter().chain(GENERATED).any(|(f, _)| *f == p);
            if !is_tracked(&p, &tracked) && !listed {
                missing.push(format!(
                    "{}: `{p}`",
                    doc.strip_prefix(&root).unwrap().display()
                ));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "named but absent:\n{}",
        missing.join("\n")
    );
    // The check reads something: ARCHITECTURE.md alone names dozens of paths.
    assert!(checked > 50, "only {checked} paths found");
}

#[test]
fn a_path_is_tracked_as_a_file_or_a_folder_holding_one() {
    let tracked = vec!["sim/src/main.rs".to_string(), "docs/bounds.md".to_string()];
    assert!(is_tracked("sim/src/main.rs", &tracked));
    assert!(is_tracked("sim/src/", &tracked));
    assert!(is_tracked("sim", &tracked));
    assert!(!is_tracked("sim/src/mai", &tracked));
    assert!(!is_tracked("fuzz/artifacts/", &tracked));
}

#[test]
fn the_path_finder_sees_ours_and_not_others() {
    let tops = vec!["sim".to_string(), "docs".to_string()];
    let text = "see `sim/src/cmd/`, `docs/bounds.md:12`, `src/IO/ReadBuffer.h`, `sim run`, `sim/src/main.rs::main`";
    assert_eq!(
        named_paths(text, &tops),
        ["sim/src/cmd/", "docs/bounds.md", "sim/src/main.rs"]
    );
}
