//! Which value wins: preset defaults < scenario `settings:` < arm `settings:` < case `set:` <
//! `--set` < sweep axis / tune parameter. A bare setting name reaches every arm that honours
//! it, overriding the arm's own value; a setting no arm honours is an error; a shadowed value
//! is said.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;
use common::*;
use scenario::{Layer, TableCache};

fn value(s: &scenario::LoadedScenario, arm: &str, key: &str) -> String {
    let r = scenario::resolve(s, &TableCache::default()).unwrap_or_else(|e| panic!("{e}"));
    let a = r.arms.iter().find(|a| a.name == arm).unwrap();
    a.strategy
        .value(key)
        .map(|v| v.text())
        .unwrap_or_else(|| "-".into())
}

fn ov(text: &str, layer: Layer) -> scenario::Override {
    scenario::parse_override(text).unwrap().at(layer)
}

const GAP: &str = "input_format_parquet_coalesce_gap_bytes";

fn scenario_with_layers() -> scenario::LoadedScenario {
    // Scenario 1MiB, arm `own` 3MiB, a case 5MiB; plus a duckdb arm.
    let extra = "  - name: own\n    strategy: clickhouse-redesign\n    settings: { input_format_parquet_coalesce_gap_bytes: 3MiB }\n  - name: duck\n    strategy: duckdb\ncases:\n  - name: c\n    set: { input_format_parquet_coalesce_gap_bytes: 5MiB }\n";
    let text = small(2, 2, extra).replace(
        "settings:\n  max_threads: 4",
        "settings:\n  input_format_parquet_coalesce_gap_bytes: 1MiB\n  max_threads: 4",
    );
    parse(&text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn each_layer_beats_the_one_below() {
    let l = scenario_with_layers();
    // Scenario settings reach arms that do not set their own; an arm's own beats them.
    assert_eq!(value(&l, "redesign", GAP), "1MiB");
    assert_eq!(value(&l, "own", GAP), "3MiB");
    // The shared setting is not a setting of duckdb: it does not reach that arm.
    assert_eq!(value(&l, "duck", GAP), "-");
    // A case's `set:` beats the arm's own.
    let case = l
        .with_overrides(&[ov(
            "input_format_parquet_coalesce_gap_bytes=5MiB",
            Layer::Case,
        )])
        .unwrap();
    assert_eq!(value(&case, "own", GAP), "5MiB");
    // `--set` beats the case, whatever order they were given in.
    let cli_then_case = l
        .with_overrides(&[ov(
            "input_format_parquet_coalesce_gap_bytes=7MiB",
            Layer::CommandLine,
        )])
        .unwrap()
        .with_overrides(&[ov(
            "input_format_parquet_coalesce_gap_bytes=5MiB",
            Layer::Case,
        )])
        .unwrap();
    assert_eq!(value(&cli_then_case, "own", GAP), "7MiB");
    assert_eq!(value(&cli_then_case, "redesign", GAP), "7MiB");
    assert!(
        cli_then_case.notes.iter().any(|n| n.contains("shadowed")),
        "the case's value is said to be shadowed: {:?}",
        cli_then_case.notes
    );
    // A sweep point beats `--set`.
    let point = cli_then_case
        .with_overrides(&[ov(
            "input_format_parquet_coalesce_gap_bytes=9MiB",
            Layer::Point,
        )])
        .unwrap();
    assert_eq!(value(&point, "own", GAP), "9MiB");
    // A later, higher-layer path to one arm beats a lower bare name.
    let path = cli_then_case
        .with_overrides(&[ov(
            "arms.own.settings.input_format_parquet_coalesce_gap_bytes=11MiB",
            Layer::Point,
        )])
        .unwrap();
    assert_eq!(value(&path, "own", GAP), "11MiB");
    assert_eq!(value(&path, "redesign", GAP), "7MiB");
}

#[test]
fn a_bare_setting_reaches_every_arm_that_honours_it_and_says_which_it_does_not() {
    let l = scenario_with_layers()
        .with_overrides(&[ov(
            "input_format_parquet_coalesce_gap_bytes=2MiB",
            Layer::CommandLine,
        )])
        .unwrap();
    assert_eq!(value(&l, "base", GAP), "2MiB");
    assert_eq!(
        value(&l, "own", GAP),
        "2MiB",
        "the arm's own value is overridden"
    );
    assert!(
        l.notes
            .iter()
            .any(|n| n.contains("overrides arm own's own")),
        "{:?}",
        l.notes
    );
    assert!(
        l.notes.iter().any(|n| n.contains("not to duck (duckdb)")),
        "{:?}",
        l.notes
    );
}

#[test]
fn a_setting_no_arm_honours_is_an_error() {
    let l = parse(&small(2, 2, "")).unwrap();
    let e = l
        .with_overrides(&[ov("allow_gap=1MiB", Layer::CommandLine)])
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("applies to no arm") && e.contains("base (clickhouse-base)"),
        "{e}"
    );
    let e = l
        .with_overrides(&[ov(
            "input_format_parquet_coalesce_gap_byte=1MiB",
            Layer::CommandLine,
        )])
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("did you mean `input_format_parquet_coalesce_gap_bytes`"),
        "{e}"
    );
    // A ClickHouse setting in a duckdb arm's own settings is refused, naming the preset.
    let text = small(2, 2, "  - name: duck\n    strategy: duckdb\n    settings: { input_format_parquet_coalesce_gap_bytes: 1MiB }\n");
    let l = parse(&text).unwrap();
    let e = scenario::resolve(&l, &TableCache::default())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("not a setting of duckdb") && e.contains("allow_gap"),
        "{e}"
    );
}

#[test]
fn reports_show_what_each_arm_ran_with() {
    let l = scenario_with_layers()
        .with_overrides(&[ov(
            "input_format_parquet_coalesce_gap_bytes=6MiB",
            Layer::CommandLine,
        )])
        .unwrap();
    let out = run(
        &l,
        &experiments::run::RunOptions {
            cases: vec!["c".into()],
            ..Default::default()
        },
    );
    let table = out.report.to_table();
    assert!(
        table.contains("own (clickhouse-redesign) ran with: max_threads = 4, max_parsing_threads = 4, input_format_parquet_coalesce_gap_bytes = 6MiB"),
        "{table}"
    );
    // On base the gap belongs to R2, which is off: not listed as run, and said.
    let base_line = table
        .lines()
        .find(|l| l.starts_with("base (clickhouse-base) ran with"))
        .unwrap();
    assert!(!base_line.contains(GAP), "{base_line}");
    assert!(
        out.notes
            .iter()
            .any(|n| n.contains("arm base") && n.contains("R2, which is off")),
        "{:?}",
        out.notes
    );
    assert!(out.report.to_json().contains("\"settings\""));
}

/// A shared `settings:` entry that a peer arm does not honour skipped that arm silently, where
/// `--set` of the same setting names it: now both say which arms it did not reach.
#[test]
fn a_shared_setting_a_peer_does_not_honour_is_noted() {
    let text = small(1, 2, "  - name: ars\n    strategy: arrow-rs\n");
    let l = parse(&text).unwrap();
    let notes: Vec<&String> = l
        .notes
        .iter()
        .filter(|n| n.contains("ars (arrow-rs)"))
        .collect();
    assert_eq!(notes.len(), 2, "{:?}", l.notes);
    assert!(notes
        .iter()
        .any(|n| n.contains("`max_threads` applies to 2 of 3 arms")));
    // Without the peer arm: nothing to say.
    let l = parse(&small(1, 2, "")).unwrap();
    assert!(l.notes.is_empty(), "{:?}", l.notes);
}
