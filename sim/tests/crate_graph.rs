//! The crate graph enforces the architecture: the workspace's members are listed bottom up in
//! `Cargo.toml`, and a crate depends only on crates listed before it (never up the tree); the
//! crates under `readpath/` depend on nothing that could read a clock, spawn a thread or do IO
//! (an allow-list: the crates below them and a few pure libraries). `readpath/clippy.toml`
//! refuses the standard library's clock, threads, files and sockets there.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;
use common::repo;

/// What the read path may depend on besides the workspace crates below it.
const READPATH_EXTERNAL: &[&str] = &[
    "thiserror",
    "serde",
    "strsim",
    "miniz_oxide",
    // `libdeflate`, C behind a safe binding: inflates a buffer, no clock, thread or IO.
    "libdeflater",
    "crc32fast",
    "rustc-hash",
    // Inline vectors: a data structure, no clock, thread or IO (`no_std` capable).
    "smallvec",
];

/// The workspace members, in the order `Cargo.toml` lists them.
fn members() -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let start = text.find("members = [").unwrap();
    let end = start + text[start..].find(']').unwrap();
    text[start..end]
        .lines()
        .skip(1)
        .filter_map(|l| l.trim().trim_end_matches(',').strip_prefix('"'))
        .map(|l| l.trim_end_matches('"').to_string())
        .collect()
}

/// A manifest's package name and the names in its `[dependencies]` table.
fn manifest(dir: &str) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(repo().join(dir).join("Cargo.toml")).unwrap();
    let mut section = String::new();
    let (mut name, mut deps) = (String::new(), Vec::new());
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let key = line.split(['=', '.', ' ']).next().unwrap_or("").trim();
        if section == "[package]" && key == "name" {
            name = line.split('"').nth(1).unwrap_or("").to_string();
        }
        if section == "[dependencies]" && !key.is_empty() {
            deps.push(key.to_string());
        }
    }
    (name, deps)
}

#[test]
fn no_crate_depends_on_one_above_it_and_the_read_path_does_no_io() {
    let dirs = members();
    assert!(dirs.len() > 10, "{dirs:?}");
    let manifests: Vec<(String, String, Vec<String>)> = dirs
        .iter()
        .map(|d| {
            let (name, deps) = manifest(d);
            (d.clone(), name, deps)
        })
        .collect();
    let position = |crate_name: &str| manifests.iter().position(|(_, n, _)| n == crate_name);
    let mut wrong = Vec::new();
    for (i, (dir, name, deps)) in manifests.iter().enumerate() {
        for dep in deps {
            match position(dep) {
                Some(j) if j >= i => wrong.push(format!(
                    "{name} ({dir}) depends on {dep}, listed at or after it"
                )),
                Some(_) => {}
                None if dir.starts_with("readpath/")
                    && !READPATH_EXTERNAL.contains(&dep.as_str()) =>
                {
                    wrong.push(format!(
                        "{name} ({dir}) depends on {dep}, outside the read path's allow-list"
                    ))
                }
                None => {}
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // The read path's own order, as ARCHITECTURE.md draws it.
    for (lower, higher) in [
        ("layout", "planner"),
        ("coalescer", "planner"),
        ("readahead", "planner"),
        ("limits", "layout"),
    ] {
        assert!(
            position(lower) < position(higher),
            "{lower} must be below {higher}"
        );
    }
}

#[test]
fn the_manifest_reader_sees_dependencies() {
    let (name, deps) = manifest("readpath/planner");
    assert_eq!(name, "planner");
    for d in ["layout", "coalescer", "readahead", "thiserror"] {
        assert!(deps.iter().any(|x| x == d), "{d} not in {deps:?}");
    }
    assert!(
        !deps.iter().any(|x| x == "proptest"),
        "a dev-dependency counted: {deps:?}"
    );
}
