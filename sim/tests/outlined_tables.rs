//! A generated table too large to keep whole keeps outlines of its files and makes each again
//! when a reader opens it (`scenario::KEEP_WHOLE_UP_TO_CHUNKS`). That changes what is kept,
//! never what runs: every shipped scenario with a generated table, with every touched file
//! outlined, reports what `tests/golden/` holds for it kept whole; the needed ranges of a trace
//! and the peer readers' runs are the same too.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;

use common::*;
use experiments::run::{run_scenario, RunOptions};

fn outlined() -> RunOptions {
    RunOptions {
        keep_whole_up_to_chunks: Some(0),
        ..RunOptions::default()
    }
}

#[test]
fn shipped_scenarios_report_the_same_with_every_file_outlined() {
    let mut checked = Vec::new();
    for entry in std::fs::read_dir(repo().join("scenarios")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        if path.extension().is_none_or(|x| x != "yaml") || !text.contains("\n  generate:") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let loaded = scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
        let csv = run_scenario(&loaded, &outlined())
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .report
            .to_csv()
            .unwrap();
        let golden =
            std::fs::read_to_string(repo().join(format!("tests/golden/{name}.csv"))).unwrap();
        assert!(
            csv == golden,
            "{name}: outlined, the report differs from the golden one"
        );
        checked.push(name);
    }
    assert!(checked.len() >= 5, "{checked:?}");
}

/// Peer programs plan every file at construction, and a trace records the needed ranges: both
/// make outlined files again, and run what the whole table runs.
#[test]
fn peers_and_needed_ranges_are_the_same_outlined() {
    let arms = [
        "arrow-cpp",
        "polars",
        "duckdb",
        "arrow-rs",
        "clickhouse-redesign",
    ]
    .map(|s| format!("  - {{ name: {s}, strategy: {s} }}\n"))
    .concat();
    let text = small(6, 3, &arms).replace(
        "settings:\n  max_threads: 4\n  max_parsing_threads: 4\n",
        "",
    );
    let loaded = parse(&text).unwrap();
    let traced = |keep: Option<u64>| {
        let out = run_scenario(
            &loaded,
            &RunOptions {
                trace: true,
                keep_whole_up_to_chunks: keep,
                ..RunOptions::default()
            },
        )
        .unwrap();
        (out.report.to_csv().unwrap(), out.trace_csv)
    };
    let (whole, outlined) = (traced(None), traced(Some(0)));
    assert!(
        whole.1.contains("needed"),
        "the trace records needed ranges"
    );
    assert!(whole.0 == outlined.0, "the reports differ");
    assert!(whole.1 == outlined.1, "the traces differ");
}
