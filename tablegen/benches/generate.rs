//! Generate, write and read the many-small-files layout (17,554 files x 437 columns, 7.7 M
//! column chunks). Prints the layout file's size once. Run: `cargo bench -p tablegen --bench generate`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use criterion::{criterion_group, criterion_main, Criterion};
use layout::format::{read_table, write_table, write_table_with, Compression, WriteOptions};
use std::hint::black_box;
use tablegen::{generate, GeneratorSpec};

fn many_small_files() -> GeneratorSpec {
    serde_saphyr::from_str(include_str!("../tests/specs/many-small-files.yaml"))
        .expect("the spec parses")
}

fn bench(c: &mut Criterion) {
    let spec = many_small_files();
    let table = generate(&spec, 42).expect("the spec generates");
    let bytes = write_table(&table).expect("writes");
    for (name, compression) in [
        ("none", Compression::None),
        ("deflate-1", Compression::Deflate { level: 1 }),
        ("deflate-6", Compression::Deflate { level: 6 }),
    ] {
        let out = write_table_with(&table, &WriteOptions { compression }).expect("writes");
        eprintln!(
            "layout file, {name}: {} bytes ({} column chunks)",
            out.len(),
            table.column_chunk_count()
        );
    }

    let mut g = c.benchmark_group("many-small-files");
    g.sample_size(10);
    g.bench_function("generate", |b| {
        b.iter(|| generate(black_box(&spec), 42).expect("generates"))
    });
    g.bench_function("write", |b| {
        b.iter(|| write_table(black_box(&table)).expect("writes"))
    });
    g.bench_function("read", |b| {
        b.iter(|| read_table(black_box(&bytes)).expect("reads"))
    });
    g.bench_function("validate", |b| {
        b.iter(|| black_box(&table).validate().expect("valid"))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
