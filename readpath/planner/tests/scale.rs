//! Scale: the many-small-files shape (2,500 files x 437 columns, five read) and a 918-row-group
//! file run to the end under every scheduling family. Timing figures come from the benchmarks
//! (`cargo bench -p sim --bench scaling`), not from here: tests read no clock.

use std::sync::Arc;

use planner::testing::{table, FakeDriver, TableShape};
use planner::{QuerySpec, Reader, Strategy};

#[test]
fn many_small_files_run_fast() {
    let t = Arc::new(table(&TableShape {
        files: 2_500,
        row_groups: 1,
        columns: 437,
        pages: 1,
        page_bytes: 57,
        dictionary_bytes: 0,
        rows: 500,
        footer_bytes: 20_000,
        ..TableShape::default()
    }));
    let files: Vec<u32> = (0..t.files.len() as u32).collect();
    for name in [
        "clickhouse-base",
        "clickhouse-redesign",
        "arrow-rs",
        "polars",
    ] {
        let mut reader = Reader::new(
            t.clone(),
            QuerySpec::new(vec![3, 90, 180, 270, 400], files.clone()),
            Strategy::preset(name).unwrap(),
        )
        .unwrap();
        let run = FakeDriver::default().run(&mut reader);
        assert!(run.finished, "{name}");
        assert_eq!(run.rows, 2_500 * 500, "{name}");
        println!(
            "{name}: {} reads, {} rows, virtual {} ms",
            run.reads.len(),
            run.rows,
            run.end_ns / 1_000_000
        );
    }
    let mut reader = Reader::new(
        Arc::new(table(&TableShape {
            row_groups: 918,
            columns: 20,
            pages: 8,
            ..TableShape::default()
        })),
        QuerySpec::new(vec![1, 5, 9], vec![0]),
        Strategy::preset("clickhouse-redesign").unwrap(),
    )
    .unwrap();
    let run = FakeDriver::default().run(&mut reader);
    assert!(run.finished);
    println!("918 row groups: {} reads", run.reads.len());
}
