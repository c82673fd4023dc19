//! The crate graph enforces the architecture: the workspace's members are listed bottom up in
//! `Cargo.toml`, and a crate depends only on crates listed before it (never up the tree); the
//! read path (the crates under `readpath/` and the workspace crates they depend on: `units`,
//! `limits`) depends on nothing that could read a clock, spawn a thread or do IO (an
//! allow-list of a few pure libraries), as Cargo itself reads the manifests (`cargo metadata`:
//! every dependency table, any target). `readpath/clippy.toml`, which every crate of the read
//! path reads, refuses the standard library's clock, threads, files, environment and sockets.
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

/// One workspace crate as Cargo resolves its manifest: its directory (relative to the
/// repository), its name and what it depends on to build or run (normal and build
/// dependencies, any target platform; dev-dependencies left out).
struct Manifest {
    dir: String,
    name: String,
    deps: Vec<String>,
}

/// Every workspace crate, from `cargo metadata --no-deps` (Cargo's own reading of the
/// manifests: `[dependencies.x]` tables, `[target.'cfg(..)'.dependencies]` and renames included).
fn manifests() -> Vec<Manifest> {
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let root = std::fs::canonicalize(repo()).unwrap();
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let manifest = std::path::PathBuf::from(p["manifest_path"].as_str().unwrap());
            let dir = manifest.parent().unwrap().strip_prefix(&root).unwrap();
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].as_str() != Some("dev"))
                .map(|d| d["name"].as_str().unwrap().to_string())
                .collect();
            Manifest {
                dir: dir.to_string_lossy().to_string(),
                name: p["name"].as_str().unwrap().to_string(),
                deps,
            }
        })
        .collect()
}

/// The crate in `dir`.
fn manifest(all: &[Manifest], dir: &str) -> (String, Vec<String>) {
    let m = all.iter().find(|m| m.dir == dir).unwrap();
    (m.name.clone(), m.deps.clone())
}

/// The read path: the crates under `readpath/` and every workspace crate they depend on,
/// directly or not, by name.
fn read_path(all: &[Manifest]) -> std::collections::BTreeSet<String> {
    let mut set: std::collections::BTreeSet<String> = all
        .iter()
        .filter(|m| m.dir.starts_with("readpath/"))
        .map(|m| m.name.clone())
        .collect();
    loop {
        let more: Vec<String> = all
            .iter()
            .filter(|m| set.contains(&m.name))
            .flat_map(|m| m.deps.iter())
            .filter(|d| all.iter().any(|m| &m.name == *d) && !set.contains(*d))
            .cloned()
            .collect();
        if more.is_empty() {
            return set;
        }
        set.extend(more);
    }
}

#[test]
fn no_crate_depends_on_one_above_it_and_the_read_path_does_no_io() {
    let dirs = members();
    assert!(dirs.len() > 10, "{dirs:?}");
    let all = manifests();
    assert_eq!(all.len(), dirs.len(), "every member is a package");
    let manifests: Vec<(String, String, Vec<String>)> = dirs
        .iter()
        .map(|d| {
            let (name, deps) = manifest(&all, d);
            (d.clone(), name, deps)
        })
        .collect();
    let read_path = read_path(&all);
    let position = |crate_name: &str| manifests.iter().position(|(_, n, _)| n == crate_name);
    let mut wrong = Vec::new();
    for (i, (dir, name, deps)) in manifests.iter().enumerate() {
        for dep in deps {
            match position(dep) {
                Some(j) if j >= i => wrong.push(format!(
                    "{name} ({dir}) depends on {dep}, listed at or after it"
                )),
                Some(_) => {}
                None if read_path.contains(name) && !READPATH_EXTERNAL.contains(&dep.as_str()) => {
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
    let all = manifests();
    let (name, deps) = manifest(&all, "readpath/planner");
    assert_eq!(name, "planner");
    for d in ["layout", "coalescer", "readahead", "thiserror"] {
        assert!(deps.iter().any(|x| x == d), "{d} not in {deps:?}");
    }
    assert!(
        !deps.iter().any(|x| x == "proptest"),
        "a dev-dependency counted: {deps:?}"
    );
    // The read path reaches the workspace crates below it, which its rules then cover.
    let rp = read_path(&all);
    for c in ["planner", "layout", "units", "limits"] {
        assert!(rp.contains(c), "{c} not in {rp:?}");
    }
    assert!(!rp.contains("drive"), "{rp:?}");
}

#[test]
fn every_read_path_crate_reads_the_read_paths_clippy_rules() {
    let all = manifests();
    let rules = std::fs::read_to_string(repo().join("readpath/clippy.toml")).unwrap();
    assert!(rules.contains("std::time::Instant::now"), "{rules}");
    for name in read_path(&all) {
        let m = all.iter().find(|m| m.name == name).unwrap();
        // Clippy reads the clippy.toml nearest the crate's directory.
        let dir = repo().join(&m.dir);
        let nearest = dir
            .ancestors()
            .map(|d| d.join("clippy.toml"))
            .find(|p| p.exists())
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(&nearest).unwrap(),
            rules,
            "{name} ({}) reads {}, not readpath/clippy.toml",
            m.dir,
            nearest.display()
        );
    }
}
