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

/// `settings.K` from a layer above the file was written to the shared map, which an arm's own
/// `settings:` beats: `--set settings.max_threads=16` lost silently to an arm's 2, where
/// `--set max_threads=16` won and said so. Both now do the same.
#[test]
fn a_dotted_settings_path_is_the_bare_setting() {
    let text = small(2, 2, "").replace(
        "    strategy: clickhouse-base\n",
        "    strategy: clickhouse-base\n    settings: { max_threads: 2 }\n",
    );
    let l = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(value(&l, "base", "max_threads"), "2");
    for layer in [Layer::Case, Layer::CommandLine, Layer::Point] {
        for text in ["settings.max_threads=16", "max_threads=16"] {
            let set = l.with_overrides(&[ov(text, layer)]).unwrap();
            assert_eq!(
                value(&set, "base", "max_threads"),
                "16",
                "{text} at {layer:?}"
            );
            assert_eq!(value(&set, "redesign", "max_threads"), "16", "{text}");
            assert!(
                set.notes
                    .iter()
                    .any(|n| n.contains("arm base's own max_threads = 2")),
                "{text}: {:?}",
                set.notes
            );
        }
    }
}

/// `--seed S` set the runs' streams after the table was generated and the query's pruning
/// drawn from the file's seed, so the report said `seed 7` over a table of seed 3. It is now
/// `--set seed=S`.
#[test]
fn the_seed_flag_reseeds_the_table_and_the_query() {
    let text = small(6, 4, "").replace(
        "  columns: [1, 3, 6]\n",
        "  columns: [1, 3, 6]\n  row_groups: 0.5\n",
    );
    let l = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    let json = |l: &scenario::LoadedScenario, seed: Option<u64>| {
        run(
            l,
            &experiments::run::RunOptions {
                seed,
                ..Default::default()
            },
        )
        .report
        .to_json()
    };
    let by_set = json(
        &l.with_overrides(&[ov("seed=7", Layer::CommandLine)])
            .unwrap(),
        None,
    );
    assert_eq!(json(&l, Some(7)), by_set);
    assert_ne!(json(&l, None), by_set, "the seed changes the run");
    let needed = |seed: u64| {
        let set = l
            .with_overrides(&[ov(&format!("seed={seed}"), Layer::CommandLine)])
            .unwrap();
        let r = run(&set, &Default::default()).report;
        metric(
            &r,
            "default",
            "base",
            experiments::report::Metric::NeededBytes,
        )
    };
    assert!(
        (1..20).any(|s| needed(s) != needed(3)),
        "the seed draws which row groups the query keeps"
    );
}

/// Every case's header gave the first case's seed and replications (a case of 3 replications
/// and seed 9 printed `seed 3, 1 replication` beside its 3-replication intervals).
#[test]
fn each_case_reports_its_own_seed_and_replications() {
    let cases = "cases:\n  - name: one\n    set: { replications: 1 }\n  - name: three\n    set: { replications: 3, seed: 9 }\n";
    let l = parse(&small(2, 2, cases)).unwrap_or_else(|e| panic!("{e}"));
    let report = run(&l, &Default::default()).report;
    let table = report.to_table();
    assert!(
        table.contains("small / one  (seed 3, 1 replication)"),
        "{table}"
    );
    assert!(
        table.contains("small / three  (seed 9, 3 replications)"),
        "{table}"
    );
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["cases"][1]["case"], "three");
    assert_eq!(json["cases"][1]["seed"], 9);
    assert_eq!(json["cases"][1]["replications"], 3);
    assert_eq!(json["cases"][0]["replications"], 1);
}
