//! No run finishes faster than its lower bound (`drive::bound`): every case, arm and query of
//! every shipped scenario, and generated runs with a store whose first byte has a floor (so the
//! chain term is not 0): small single-file tables under random ClickHouse settings, and the
//! recorded Iceberg table (predicates, row groups pruned) read by every reader, ClickHouse's
//! and the peers', through a cold, half-warm or warm page cache or filesystem cache, with the
//! Iceberg and Parquet metadata caches cold or warm.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use drive::metric::Metric;
use drive::{run_once, Recording};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

/// (wall, bound) of every run of `file` under `set`, all cases (or the first), arms and queries.
fn runs(file: &str, set: &[String]) -> Vec<(String, f64, f64)> {
    runs_of(file, set, usize::MAX)
}

fn runs_of(file: &str, set: &[String], max_cases: usize) -> Vec<(String, f64, f64)> {
    let overrides: Vec<_> = set
        .iter()
        .map(|s| scenario::parse_override(s).unwrap_or_else(|e| panic!("{s}: {e}")))
        .collect();
    let loaded = scenario::load(&dir().join(file), &overrides).unwrap_or_else(|e| panic!("{e}"));
    let tables = scenario::TableCache::default();
    let mut out = Vec::new();
    for (case, case_overrides) in scenario::cases(&loaded)
        .unwrap()
        .into_iter()
        .take(max_cases)
    {
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
        for (at, wall, bound) in runs_of("single-large-file.yaml", &set, 1) {
            prop_assert!(wall >= bound, "{} {:?}: wall {} ns under its bound {} ns", at, set, wall, bound);
        }
    }

    #[test]
    fn no_cached_or_peer_run_beats_its_bound(
        reader in prop::sample::select(vec![
            "clickhouse-base", "clickhouse-redesign", "duckdb", "polars", "arrow-cpp", "arrow-rs",
        ]),
        cache in 0usize..5,
        iceberg_warm in any::<bool>(),
        parquet_warm in any::<bool>(),
        first_byte_min_ms in 1u32..27,
        seed in 0u64..1000,
    ) {
        let warm = |b: bool| if b { "warm" } else { "cold" };
        let mut set = vec![
            format!("arms.base.strategy={reader}"),
            format!("caches.iceberg_metadata={}", warm(iceberg_warm)),
            format!("caches.parquet_metadata={}", warm(parquet_warm)),
            format!("store.first_byte.min={first_byte_min_ms}ms"),
            format!("seed={seed}"),
        ];
        let page = |fraction: &str| vec![
            "caches.page_cache.page_cache_max_size=64GiB".to_string(),
            "caches.page_cache.page_cache_block_size=1MiB".to_string(),
            format!("caches.page_cache.warm.fraction={fraction}"),
        ];
        let fs = |fraction: &str| vec![
            "caches.filesystem_cache.max_size=10GiB".to_string(),
            "caches.filesystem_cache.max_file_segment_size=32MiB".to_string(),
            format!("caches.filesystem_cache.warm.fraction={fraction}"),
            "caches.filesystem_cache.warm.pattern=prefix".to_string(),
        ];
        set.extend(match cache {
            0 => vec![],
            1 => page("0.5"),
            2 => page("1"),
            3 => fs("0"),
            _ => fs("1"),
        });
        let runs = runs_of("tpch-iceberg.yaml", &set, 1);
        prop_assert_eq!(runs.len(), 10, "two arms, five queries");
        for (at, wall, bound) in runs {
            prop_assert!(wall >= bound, "{} {:?}: wall {} ns under its bound {} ns", at, set, wall, bound);
        }
    }
}
