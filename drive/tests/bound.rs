//! No run finishes faster than its lower bound (`drive::bound`): every case, arm and query of
//! every shipped scenario, and generated cases (small tables, random settings, a store with a
//! first-byte floor so the chain term is not 0).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use drive::metric::Metric;
use drive::{run_once, Recording};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

/// (wall, bound) of every run of `file` under `set`, all cases, arms and queries.
fn runs(file: &str, set: &[String]) -> Vec<(String, f64, f64)> {
    let overrides: Vec<_> = set
        .iter()
        .map(|s| scenario::parse_override(s).unwrap_or_else(|e| panic!("{s}: {e}")))
        .collect();
    let loaded = scenario::load(&dir().join(file), &overrides).unwrap_or_else(|e| panic!("{e}"));
    let tables = scenario::TableCache::default();
    let mut out = Vec::new();
    for (case, case_overrides) in scenario::cases(&loaded).unwrap() {
        let r = scenario::resolve(&loaded.with_overrides(&case_overrides).unwrap(), &tables)
            .unwrap_or_else(|e| panic!("{e}"));
        for arm in &r.arms {
            for (q, query) in r.queries.iter().enumerate() {
                let m = run_once(&r, arm, q, query, 0, Recording::default())
                    .unwrap_or_else(|e| panic!("{file} {case} {}: {e}", arm.name))
                    .metrics;
                out.push((
                    format!("{file} / {case} / {} / {}", arm.name, query.name),
                    m.value(Metric::WallTime),
                    m.value(Metric::LowerBound),
                ));
            }
        }
    }
    out
}

#[test]
fn no_shipped_run_beats_its_bound() {
    let mut n = 0;
    for entry in std::fs::read_dir(dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        for (at, wall, bound) in runs(&file, &[]) {
            assert!(bound > 0.0, "{at}: a bound of 0 says nothing");
            assert!(
                wall >= bound,
                "{at}: wall {wall} ns under its bound {bound} ns"
            );
            n += 1;
        }
    }
    assert!(n > 50, "only {n} runs");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]
    #[test]
    fn no_generated_run_beats_its_bound(
        files in 1u32..4,
        row_groups in 1u32..12,
        io_threads in prop::sample::select(vec![1u32, 4, 16, 64]),
        floor in prop::sample::select(vec!["0", "1MiB", "64MiB"]),
        gap in prop::sample::select(vec!["0", "64KiB", "4MiB"]),
        first_byte_min_ms in 1u32..27,
        seed in 0u64..1000,
    ) {
        let set = vec![
            format!("table.generate.file_count={files}"),
            format!("table.generate.row_groups_per_file={row_groups}"),
            format!("input_format_parquet_max_io_threads={io_threads}"),
            format!("input_format_parquet_min_bytes_in_flight={floor}"),
            format!("input_format_parquet_coalesce_gap_bytes={gap}"),
            format!("store.first_byte.min={first_byte_min_ms}ms"),
            format!("seed={seed}"),
        ];
        for (at, wall, bound) in runs("single-large-file.yaml", &set) {
            prop_assert!(wall >= bound, "{} {:?}: wall {} ns under its bound {} ns", at, set, wall, bound);
        }
    }
}
