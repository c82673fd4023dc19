//! The captured request logs of real Iceberg clients (`traces/captured/iceberg/`: DuckDB's
//! `iceberg` extension and pyiceberg running TPC-H Q6 through the loopback test bed) parse
//! whole, fit, replay against the bed's store model, and re-plan under other strategies from
//! the recorded layout of the table they read.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use std::path::PathBuf;
use std::process::Command;

use experiments::whatif::{needed_from_reads, what_if, WhatIfArm, WhatIfOptions, WhatIfReport};
use tracefit::{Operation, ParseOptions, ParsedTrace, TraceFormat};

const CLIENTS: [&str; 2] = ["duckdb-iceberg", "pyiceberg"];
const Q06_COLUMNS: [&str; 4] = ["l_quantity", "l_extendedprice", "l_discount", "l_shipdate"];

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../traces/captured/iceberg")
}

fn parse(name: &str) -> ParsedTrace {
    let strict = ParseOptions {
        strict: true,
        ..ParseOptions::default()
    };
    tracefit::parse_file(&dir().join(name), &strict).unwrap()
}

fn bed(client: &str) -> models::store::StoreSpec {
    let path = dir().join(format!("tpch-q06-{client}.bed.yaml"));
    models::store::StoreSpec::from_yaml(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn lines(name: &str) -> usize {
    let text = std::fs::read_to_string(dir().join(name)).unwrap();
    text.lines().filter(|l| !l.trim().is_empty()).count()
}

#[test]
fn every_line_of_both_logs_parses_and_the_request_csv_fits_a_model_that_loads() {
    for client in CLIENTS {
        let log = parse(&format!("tpch-q06-{client}.log"));
        assert_eq!(log.format, TraceFormat::S3AccessLog);
        assert_eq!(log.records.len(), lines(&format!("tpch-q06-{client}.log")));
        let csv = parse(&format!("tpch-q06-{client}.csv"));
        assert_eq!(csv.format, TraceFormat::RequestLog);
        assert_eq!(
            csv.records.len() + 1,
            lines(&format!("tpch-q06-{client}.csv"))
        );
        // Both say the same requests.
        let ops = |t: &ParsedTrace| -> Vec<(Operation, String, u64)> {
            t.records
                .iter()
                .map(|r| (r.operation.clone(), r.object.clone(), r.bytes))
                .collect()
        };
        assert_eq!(ops(&log), ops(&csv), "{client}");

        let work = tempfile::tempdir().unwrap();
        let model = work.path().join("fitted.yaml");
        let out = Command::new(env!("CARGO_BIN_EXE_sim"))
            .args(["fit", "--bandwidth-min-bytes", "64KiB", "-o"])
            .arg(&model)
            .arg(dir().join(format!("tpch-q06-{client}.csv")))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{client}: {stderr}");
        assert!(stderr.contains("0 malformed"), "{client}: {stderr}");
        models::store::StoreSpec::from_yaml(&std::fs::read_to_string(&model).unwrap()).unwrap();
    }
}

#[test]
fn replayed_against_the_bed_the_makespan_comes_within_a_quarter() {
    for client in CLIENTS {
        let csv = parse(&format!("tpch-q06-{client}.csv"));
        let gets = csv
            .records
            .iter()
            .filter(|r| r.operation == Operation::Get)
            .count();
        let open = tracefit::replay_open_loop(&csv, &bed(client), 1).unwrap();
        assert_eq!(open.requests, gets, "{client}");
        assert_eq!(open.failed, 0, "{client}");
        // Measured when the captures were made: +2.7% (DuckDB), +12.0% (pyiceberg).
        assert!(
            open.makespan_relative_error.abs() < 0.25,
            "{client}: open-loop makespan error {:+.1}%",
            open.makespan_relative_error * 100.0
        );
        let closed = tracefit::replay_closed_loop(&csv, &bed(client), 1, Some(2)).unwrap();
        assert_eq!(closed.requests, gets);
        assert!(closed.makespan_simulated_ns > 0.0 && closed.makespan_relative_error.is_finite());
    }
}

fn arm(strategy: &str) -> WhatIfArm {
    WhatIfArm {
        strategy: strategy.into(),
        shared_settings: Vec::new(),
        settings: Vec::new(),
    }
}

fn what_if_on(client: &str, columns: &[&str], strategies: &[&str]) -> WhatIfReport {
    let csv = parse(&format!("tpch-q06-{client}.csv"));
    let bytes = std::fs::read(dir().join("tpch-lineitem.layout")).unwrap();
    let table = layout::format::read_table(&bytes).unwrap();
    let columns: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    let (derived, _notes) = needed_from_reads(&csv, &table, &columns).unwrap();
    let arms: Vec<WhatIfArm> = strategies.iter().map(|s| arm(s)).collect();
    what_if(&derived, &bed(client), &arms, &WhatIfOptions::default()).unwrap()
}

#[test]
fn the_what_if_re_plans_the_real_readers_reads_and_its_own_preset_fetches_what_they_fetched() {
    let duck = what_if_on(
        "duckdb-iceberg",
        &Q06_COLUMNS,
        &["duckdb", "clickhouse-base", "clickhouse-redesign"],
    );
    let (recorded, preset) = (&duck.rows[0], &duck.rows[1]);
    // 8 files (DuckDB pruned the other months), every byte DuckDB fetched is needed or a
    // footer tail, and the duckdb preset fetches exactly those bytes (in fewer GETs: a miss
    // the README lists).
    assert_eq!(duck.files, 8);
    assert_eq!(preset.bytes, recorded.bytes, "{}", duck.to_table());
    assert!(duck.needed_bytes <= recorded.bytes);
    for r in &duck.rows[2..] {
        assert!(
            r.gets > 0 && r.wall_ns.is_some_and(|w| w > 0),
            "{}",
            duck.to_table()
        );
    }

    let py = what_if_on(
        "pyiceberg",
        &Q06_COLUMNS,
        &["arrow-cpp", "clickhouse-base", "clickhouse-redesign"],
    );
    let (recorded, preset) = (&py.rows[0], &py.rows[1]);
    assert_eq!(py.files, 12, "pyiceberg reads every month of 1994");
    let near = |a: u64, b: u64, tol: f64| (a as f64 - b as f64).abs() <= tol * b as f64;
    assert!(near(preset.gets, recorded.gets, 0.05), "{}", py.to_table());
    assert!(
        near(preset.bytes, recorded.bytes, 0.02),
        "{}",
        py.to_table()
    );
}

#[test]
fn the_wrong_columns_do_not_reproduce_the_recorded_bytes() {
    // The companion: with a column fewer, the preset no longer fetches what DuckDB fetched.
    let duck = what_if_on("duckdb-iceberg", &Q06_COLUMNS[..3], &["duckdb"]);
    assert!(
        duck.rows[1].bytes < duck.rows[0].bytes,
        "{}",
        duck.to_table()
    );
}

#[test]
fn the_cli_what_if_of_a_capture_names_its_rows_and_notes() {
    let d = dir();
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .arg("replay")
        .arg(d.join("tpch-q06-duckdb-iceberg.csv"))
        .arg("--model")
        .arg(d.join("tpch-q06-duckdb-iceberg.bed.yaml"))
        .arg("--layout")
        .arg(d.join("tpch-lineitem.layout"))
        .args(["--columns", &Q06_COLUMNS.join(",")])
        .args(["--what-if", "duckdb", "--what-if", "clickhouse-redesign"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "recorded (arm recorded)",
        "duckdb ",
        "clickhouse-redesign",
        "5 requests of the log",
    ] {
        assert!(stdout.contains(want), "`{want}` missing:\n{stdout}");
    }
    // Without --columns, clap refuses.
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .arg("replay")
        .arg(d.join("tpch-q06-duckdb-iceberg.csv"))
        .args(["--model", "s3-standard", "--what-if", "duckdb", "--layout"])
        .arg(d.join("tpch-lineitem.layout"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Runs `sim ARGS` from the repository root; its stdout.
fn sim_stdout(args: &[&str]) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .current_dir(root)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "sim {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_readme_walkthrough_shows_what_sim_tune_and_sim_prune_print() {
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    let tune = sim_stdout(&[
        "tune",
        "traces/captured/iceberg/tpch-q06.yaml",
        "--param",
        "input_format_parquet_coalesce_gap_bytes=4KiB..8MiB:log",
        "--param",
        "input_format_parquet_min_bytes_in_flight=1MiB..256MiB:log",
        "--budget",
        "30",
    ]);
    let block = tune.trim_end();
    assert!(block.lines().count() > 10, "{tune}");
    assert!(
        readme.contains(block),
        "the README's `sim tune` output is not what it prints now; paste this:\n{block}"
    );
    let prune = sim_stdout(&[
        "prune",
        "traces/layouts/tpch-lineitem.layout",
        "--where",
        "l_shipdate >= date '1995-09-01' and l_shipdate < date '1995-10-01'",
    ]);
    let kept: Vec<&str> = prune.lines().filter(|l| l.ends_with(",1")).collect();
    assert_eq!(kept.len(), 2, "{prune}");
    for line in kept {
        assert!(readme.contains(line), "the README lacks `{line}`");
    }
}
