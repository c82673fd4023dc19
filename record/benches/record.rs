//! Recording speed: 1,000 small Parquet files (the `sim record parquet` path end to end:
//! directory walk, footer and page index parse, mapping, schema deduplication).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use criterion::{criterion_group, criterion_main, Criterion};
use record::{record_parquet_files, testdata::write_small_parquet_files};

fn record_1000_files(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // 1,000 files x 8 columns x 1,000 rows: 10 pages per chunk, as a page-indexed table would.
    write_small_parquet_files(dir.path(), 1000, 8, 1000, 42).expect("test files written");
    let paths = [dir.path().to_path_buf()];
    let mut group = c.benchmark_group("record");
    group.sample_size(10);
    group.bench_function("parquet_1000_files_8_columns", |b| {
        b.iter(|| {
            let outcome = record_parquet_files(&paths).expect("recorded");
            assert_eq!(outcome.table.files.len(), 1000);
            outcome
        })
    });
    group.finish();
}

criterion_group!(benches, record_1000_files);
criterion_main!(benches);
