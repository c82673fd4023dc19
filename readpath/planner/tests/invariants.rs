//! Property tests over random tables, queries and strategies: every run finishes (no stall,
//! no deadlock, whatever the budgets), delivers the same rows whatever the strategy, and
//! gives back every memory charge.

use std::sync::Arc;

use planner::testing::{table, FakeDriver, TableShape};
use planner::{QuerySpec, Reader, STRATEGY_PRESETS};
use proptest::prelude::*;

fn shape() -> impl proptest::strategy::Strategy<Value = TableShape> {
    (
        1u32..4,
        1u32..6,
        2u32..7,
        1u32..5,
        1u64..200,
        prop::bool::ANY,
        0u32..2,
    )
        .prop_map(
            |(files, row_groups, columns, pages, page_kib, bloom, dict)| TableShape {
                files,
                row_groups,
                columns,
                pages,
                page_bytes: page_kib * 1024,
                dictionary_bytes: dict * 2048,
                rows: 10_000,
                bloom,
                ..TableShape::default()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_strategy_finishes_with_the_same_rows(
        shape in shape(),
        seed in 0u64..1000,
        keep in 0.0f64..=1.0,
        selectivity in 0.0f64..=1.0,
        page_keep in 0.0f64..=1.0,
        drop in 0.0f64..=1.0,
        use_prewhere in prop::bool::ANY,
        high_kib in prop::sample::select(vec![16u64, 256, 4096, 4 * 1024 * 1024]),
        threads in 1u32..4,
        switches in prop::collection::vec(prop::bool::ANY, 10),
        consume_ns in prop::sample::select(vec![100_000u64, 500_000_000]),
    ) {
        let t = Arc::new(table(&shape));
        let cols = shape.columns;
        let mut q = QuerySpec::new(vec![0, cols - 1], (0..shape.files).collect());
        q.seed = seed;
        q.row_group_keep_fraction = keep;
        if use_prewhere {
            q.prewhere_columns = vec![cols / 2];
            q.prewhere_selectivity = selectivity;
        }
        q.column_index_columns = vec![0];
        q.page_keep_fraction = page_keep;
        q.bloom_columns = vec![cols - 1];
        q.bloom_drop_fraction = drop;
        let mut rows = None;
        let mut settings: Vec<(String, String)> = vec![
            ("max_threads".into(), threads.to_string()),
            ("input_format_parquet_memory_high_watermark".into(), format!("{high_kib}KiB")),
            ("input_format_parquet_memory_low_watermark".into(), "0".into()),
        ];
        for (i, on) in switches.iter().enumerate() {
            settings.push((format!("r{}", i + 1), on.to_string()));
        }
        for name in STRATEGY_PRESETS {
            let mut s = planner::Strategy::preset(name).unwrap();
            for (k, v) in &settings {
                let key = match k.strip_prefix('r').and_then(|n| n.parse::<usize>().ok()) {
                    Some(n) => planner::R_NAMES[n - 1],
                    None => k.as_str(),
                };
                // Each preset takes the settings it honours (ClickHouse's are not a peer's).
                if s.honours(key) {
                    s.set(key, v).unwrap();
                }
            }
            let mut reader = Reader::new(t.clone(), q.clone(), s).unwrap();
            // A slow consumer keeps delivered chunks (and their memory) for long.
            let driver = FakeDriver { consume_ns, ..FakeDriver::default() };
            let run = driver.run(&mut reader);
            prop_assert!(run.finished, "{name} did not finish: {:?} status {:?}", run.error, reader.status());
            let status = reader.status();
            prop_assert_eq!(status.memory.iter().map(|u| u.usage_bytes).sum::<u64>(), 0, "{} leaked memory", name);
            prop_assert_eq!(status.reads_queued, 0);
            match rows {
                None => rows = Some(run.rows),
                Some(r) => prop_assert_eq!(r, run.rows, "{} delivered other rows", name),
            }
        }
    }
}
