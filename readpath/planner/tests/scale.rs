//! Scale: the many-small-files shape (2,500 files x 437 columns, five read) must run in well
//! under a second in release. Run with `cargo test -p planner --release --test scale -- --ignored --nocapture`.

use std::sync::Arc;

use planner::testing::{table, FakeDriver, TableShape};
use planner::{QuerySpec, Reader, Strategy};

#[test]
#[ignore = "timing figure; run in release"]
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
        let started = std::time::Instant::now();
        let run = FakeDriver::default().run(&mut reader);
        let took = started.elapsed();
        assert!(run.finished);
        println!(
            "{name}: {} reads, {} rows, virtual {} ms, wall {:?}",
            run.reads.len(),
            run.rows,
            run.end_ns / 1_000_000,
            took
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
    let started = std::time::Instant::now();
    let run = FakeDriver::default().run(&mut reader);
    println!(
        "918 row groups: {} reads, wall {:?}",
        run.reads.len(),
        started.elapsed()
    );
}
