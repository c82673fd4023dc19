//! Every `sim` subcommand on hostile arguments and inputs (issue 20): each ends with a clear
//! error (exit 1, or clap's 2 for a malformed command line) or succeeds; never a panic
//! (exit 101), an abort, or work without end. Each input that once failed is here.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;
use common::repo;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `sim args` in the repository; returns (exit code, stderr).
fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .current_dir(repo())
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out
        .status
        .code()
        .unwrap_or_else(|| panic!("{args:?}: killed by a signal\n{err}"));
    assert!(!err.contains("panicked"), "{args:?} panicked:\n{err}");
    (code, err)
}

/// `sim args` fails cleanly, saying `want`.
fn refused(args: &[&str], want: &str) {
    let (code, err) = run(args);
    assert!(code == 1 || code == 2, "{args:?}: exit {code}\n{err}");
    assert!(err.contains(want), "{args:?}: expected `{want}` in:\n{err}");
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A copy of a shipped scenario with `from` replaced by `to`.
fn edited(name: &str, from: &str, to: &str) -> String {
    edited_all(name, &[(from, to)])
}

/// A copy of a shipped scenario with each `from` replaced by its `to`.
fn edited_all(name: &str, edits: &[(&str, &str)]) -> String {
    let mut text = std::fs::read_to_string(repo().join("scenarios").join(name)).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{name} has no `{from}`");
        text = text.replacen(from, to, 1);
    }
    // Named by its text: tests run on several threads and must not share a scratch file.
    let tag = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        h.finish()
    };
    let path = scratch().join(format!("{tag:016x}-{name}"));
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

const SMALL: &str = "scenarios/iceberg-bench.yaml";
const GAP: &str = "input_format_parquet_coalesce_gap_bytes";

#[test]
fn every_subcommand_refuses_hostile_arguments() {
    let gap_range = format!("{GAP}=64KiB..16MiB:log");
    let cases: &[(&[&str], &str)] = &[
        (&["run", "no-such.yaml"], "no-such.yaml"),
        (&["run", SMALL, "--reps", "1000000"], "--reps 1000000"),
        (&["run", SMALL, "--threads", "0"], "threads"),
        (&["run", SMALL, "--set", "nokey=1"], "nokey"),
        (
            &[
                "sweep",
                SMALL,
                "--vary",
                &format!("{GAP}=0..16777216TiB:+1B"),
            ],
            "16777216TiB",
        ),
        (
            &["sweep", SMALL, "--vary", &format!("{GAP}=0..1TiB:+1B")],
            "10000",
        ),
        // Found by the `values` fuzz target: a count of usize::MAX + 1 overflowed.
        (
            &[
                "sweep",
                SMALL,
                "--vary",
                "max_threads=8..+17777777777777777777777777777777777777:+1",
            ],
            "at most 10000 per axis",
        ),
        (
            &[
                "sweep",
                SMALL,
                "--vary",
                &format!("{GAP}=0..9999B:+1B"),
                "--vary",
                "input_format_parquet_max_io_threads=1..4000:+1",
            ],
            "points",
        ),
        (
            &["sweep", SMALL, "--vary", &format!("{GAP}=1MiB..0:x2")],
            "backwards",
        ),
        (
            &["tune", SMALL, "--param", &gap_range, "--budget", "1000000"],
            "--budget 1000000",
        ),
        (
            &["tune", SMALL, "--param", &format!("{GAP}=16MiB..1KiB")],
            "backwards",
        ),
        (&["fit", "no-such.log", "-o", "/dev/null"], "no-such.log"),
        (
            &["replay", "no-such.csv", "--model", "s3-standard"],
            "no-such.csv",
        ),
        (
            &["replay", "Cargo.toml", "--model", "no-such-model"],
            "no-such-model",
        ),
        (
            &["validate", SMALL, "--set", "settings.max_threads=1e12"],
            "max_threads",
        ),
        (
            &["record", "parquet", "Cargo.toml", "--strict"],
            "Cargo.toml",
        ),
        (&["record", "iceberg", "Cargo.toml"], "Cargo.toml"),
        (&["settings", "no-such-strategy"], "no-such-strategy"),
        (
            &["sweep", SMALL, "--vary", &gap_range, "--shard", "3/3"],
            "expected K/N",
        ),
        (
            &[
                "sweep",
                SMALL,
                "--vary",
                &gap_range,
                "--shard",
                "0/99999999999999999999",
            ],
            "expected K/N",
        ),
        (
            &["sweep", "merge", "no-such.csv", "-o", "/dev/null"],
            "no-such.csv",
        ),
        (
            &["sweep", "merge", "Cargo.toml", "-o", "/dev/null"],
            "not a sweep CSV",
        ),
        (
            &["eval", SMALL, "--settings", "{\"max_threads\": 1e12}"],
            "max_threads",
        ),
        (&["eval", SMALL, "--settings", "{{{{"], "is not JSON"),
        (&["findings", "--scenarios", "no-such-dir"], "no-such-dir"),
        (
            &["prune", "Cargo.toml", "--where", "a < 1"],
            "not a layout file",
        ),
        (
            &[
                "prune",
                "traces/layouts/tpch-lineitem.layout",
                "--where",
                "((((",
            ],
            "expected a column name",
        ),
        (
            &[
                "prune",
                "traces/layouts/tpch-lineitem.layout",
                "--where",
                "no_such_column < 1",
            ],
            "no_such_column",
        ),
    ];
    for (args, want) in cases {
        refused(args, want);
    }
}

#[test]
fn a_tune_budget_that_ends_mid_simplex_returns_the_best_so_far() {
    // Panicked inside argmin (`NelderMead::init`) before: exit 101.
    for budget in ["9", "10", "11"] {
        let (code, err) = run(&[
            "tune",
            SMALL,
            "--param",
            &format!("{GAP}=64KiB..16MiB:log"),
            "--param",
            "input_format_parquet_max_io_threads=2..64",
            "--budget",
            budget,
            "--seed",
            "3",
        ]);
        assert_eq!(code, 0, "budget {budget}:\n{err}");
    }
}

#[test]
fn generator_specs_past_a_bound_are_refused_at_once() {
    for (from, to, want) in [
        (
            "manifest_count: 32",
            "manifest_count: 1000000000",
            "MAX_MANIFESTS_PER_QUERY",
        ),
        (
            "rows_per_row_group: 120000",
            "rows_per_row_group: 1000000000000",
            "MAX_ROWS_PER_ROW_GROUP",
        ),
        ("count: 40", "count: 100000000", "MAX_COLUMNS_PER_SCHEMA"),
        // 10^12 files once made the skeleton ask for 96 TB and abort.
        (
            "file_count: 55",
            "file_count: 1000000000000",
            "MAX_FILES_PER_TABLE",
        ),
        (
            "row_groups_per_file: 2",
            "row_groups_per_file: 2000000",
            "MAX_ROW_GROUPS_PER_FILE",
        ),
    ] {
        let path = edited("iceberg-bench.yaml", from, to);
        refused(&["run", &path], want);
    }
    // Terabyte row groups of 1 KiB pages once asked for 6 GB of page locations in the first
    // file and aborted; the page bound now holds before a file's pages are made.
    let path = edited_all(
        "iceberg-bench.yaml",
        &[
            ("median: 6MiB, sigma: 0.3", "median: 4TiB, sigma: 0.3"),
            ("page_size: 1MiB", "page_size: 1KiB"),
        ],
    );
    refused(&["run", &path], "MAX_GENERATED_PAGES");
    // 40,000 row groups of 437 columns are 17.5 M chunks in one file, each count within its
    // own bound: refused before any file is made (held only to the table's 100 M chunks, it
    // was refused a second later, by a footer past its 32-bit length, at 1.4 GB resident).
    let path = edited(
        "many-small-files.yaml",
        "row_groups_per_file: 1\n",
        "row_groups_per_file: 40000\n",
    );
    refused(&["run", &path], "MAX_GENERATED_CHUNKS_PER_FILE");
}

#[test]
fn cache_units_past_their_bounds_are_refused_at_once() {
    // 1-byte blocks made a half-warm page cache ask for 4 GB and abort; a 1-byte alignment
    // made a cold filesystem cache run for minutes.
    for (name, from, to) in [
        (
            "partially-warm-page-cache.yaml",
            "page_cache_block_size: 1MiB",
            "page_cache_block_size: 1B",
        ),
        (
            "fs-cache-cold.yaml",
            "boundary_alignment: 4MiB",
            "boundary_alignment: 1B",
        ),
    ] {
        let path = edited(name, from, to);
        refused(&["run", &path], "MIN_CACHE_BLOCK_BYTES");
    }
    // A filesystem cache 0.9 warm at the smallest alignment took 2.2 GB.
    let path = edited(
        "fs-cache-cold.yaml",
        "boundary_alignment: 4MiB",
        "boundary_alignment: 4KiB\n    warm: { fraction: 0.9, pattern: random }",
    );
    refused(&["run", &path], "MAX_WARM_CACHE_UNITS");
}

#[test]
fn store_models_past_a_bound_are_refused_at_once() {
    // Each ran without end or aborted: an event per body byte, 4 billion timed-out attempts,
    // 4 billion hedges.
    for (refinement, want) in [
        ("progress_chunk: 1B", "MIN_PROGRESS_CHUNK_BYTES"),
        (
            "timeout: 1ns, retry: { max_attempts: 4294967295 }",
            "MAX_ATTEMPTS_PER_READ",
        ),
        (
            "hedge: { after: 1ns, max_hedges: 4294967295 }",
            "MAX_HEDGES_PER_READ",
        ),
    ] {
        let to = format!("store: {{ preset: s3-standard, {refinement} }}");
        let path = edited("iceberg-bench.yaml", "store: s3-standard", &to);
        refused(&["run", &path], want);
    }
}

#[test]
fn costs_of_hours_a_task_end_the_run_at_the_virtual_time_bound() {
    // A decode of 2,000 hours a task made the driver's event times and busy sums wrap past
    // 2^64 ns (a wall time of 18,446,400,026 s printed where about 2.1e10 s was due), and
    // 1,000 hours printed a `decode_idle` of u64::MAX ns.
    for cost in ["1000h", "2000h"] {
        refused(
            &[
                "run",
                "scenarios/single-large-file.yaml",
                "--case",
                "459-row-groups",
                "--arm",
                "base",
                "--set",
                &format!("cpu.decode.per_task={cost}"),
            ],
            "MAX_VIRTUAL_TIME_NS",
        );
    }
}

/// A one-file layout of `groups` row groups, each stating `rows` rows and a chunk of
/// `uncompressed` bytes.
fn hostile_layout(groups: usize, rows: u64, uncompressed: u64) -> PathBuf {
    let chunk = layout::ColumnChunk {
        chunk_start: 4,
        data_len: 100,
        uncompressed_bytes: uncompressed,
        ..layout::ColumnChunk::default()
    };
    let table = layout::Table {
        schemas: vec![layout::Schema {
            columns: vec!["c".into()],
        }],
        files: vec![layout::FileLayout {
            path: "f.parquet".into(),
            size_bytes: 1000,
            footer_len_bytes: 100,
            row_groups: vec![layout::RowGroup::new(rows, vec![chunk]); groups],
            ..layout::FileLayout::default()
        }],
        ..layout::Table::default()
    };
    let path = scratch().join(format!("{groups}-{rows}-{uncompressed}.layout"));
    std::fs::write(&path, layout::format::write_table(&table).unwrap()).unwrap();
    path
}

fn layout_scenario(layout: &Path) -> String {
    let path = layout.with_extension("yaml");
    let text = format!(
        "name: hostile\ntable:\n  layout: {}\nquery:\n  columns: [0]\nstore: s3-standard\narms:\n  \
         - {{ name: base, strategy: clickhouse-base }}\n  - {{ name: redesign, strategy: clickhouse-redesign }}\n",
        layout.display()
    );
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn small_layouts_stating_huge_tables_are_refused_by_name() {
    // 10^12 rows in one row group made the redesign build 15 M subgroups (4.3 GB, > 60 s); an
    // uncompressed size near 2^63 overflowed a sum in the planner (release printed decode 0).
    let rows = hostile_layout(1, 1_000_000_000_000, 1000);
    assert!(std::fs::metadata(&rows).unwrap().len() < 400);
    refused(&["run", &layout_scenario(&rows)], "MAX_ROWS_PER_ROW_GROUP");
    let bytes = hostile_layout(1, 1000, 1 << 63);
    refused(
        &["run", &layout_scenario(&bytes)],
        "MAX_UNCOMPRESSED_BYTES_PER_CHUNK",
    );
    // Each row group under the row bound, 17 of them over the query's subgroup bound (65,664
    // subgroups each at 65,409 rows): refused before planning; one of them runs.
    let many = hostile_layout(17, limits::MAX_ROWS_PER_ROW_GROUP, 1000);
    refused(
        &["run", &layout_scenario(&many)],
        "MAX_ROW_SUBGROUPS_PER_QUERY",
    );
    let one = hostile_layout(1, limits::MAX_ROWS_PER_ROW_GROUP, 1000);
    let (code, err) = run(&["run", &layout_scenario(&one)]);
    assert_eq!(code, 0, "65,664 subgroups are within the bound:\n{err}");
}

#[test]
fn a_hostile_iceberg_manifest_is_an_error_not_an_abort() {
    // A 9-byte Avro manifest made apache-avro try to allocate 10-87 GB.
    let from = repo().join("record/tests/data/iceberg/events");
    let to = scratch().join("events");
    record::testdata::copy_dir(&from, &to).unwrap();
    for entry in std::fs::read_dir(to.join("metadata")).unwrap() {
        let p = entry.unwrap().path();
        if p.to_string_lossy().ends_with("-m0.avro") {
            std::fs::write(&p, b"Obj\x01\xfe\xff\xff\xff\x0f").unwrap();
        }
    }
    let json = std::fs::read_dir(to.join("metadata"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".metadata.json"))
        .max()
        .unwrap();
    let (code, err) = run(&[
        "record",
        "iceberg",
        &json.display().to_string(),
        "-o",
        &scratch().join("i.layout").display().to_string(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("-m0.avro"), "{err}");
}

#[test]
fn cpu_thread_counts_past_the_bound_are_refused() {
    // `cores: 4294967295` once ran with its network pool clamped to 4,096 without a word.
    let path = edited(
        "clickbench-single-file.yaml",
        "cores: 96",
        "cores: 4294967295",
    );
    refused(&["run", &path], "MAX_THREADS");
}
