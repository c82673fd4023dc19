//! Run time against the number of planned reads: the same shape at 1x, 10x and 100x files.
//! `cargo bench -p experiments --bench scaling`. Time per read must stay flat (linear growth).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use experiments::run::{run_scenario, RunOptions};

fn scenario(files: u32) -> scenario::LoadedScenario {
    let text = format!(
        r#"
name: scaling
seed: 1
table:
  generate:
    file_count: {files}
    row_groups_per_file: 4
    row_group_size: 1MiB
    rows_per_row_group: 10000
    columns: {{ count: 16 }}
query:
  columns: [1, 5, 9, 13]
store: s3-standard
settings: {{ max_threads: 16, max_parsing_threads: 16 }}
arms:
  - {{ name: base, strategy: clickhouse-base }}
  - {{ name: redesign, strategy: clickhouse-redesign }}
"#
    );
    scenario::parse(std::path::Path::new("scaling.yaml"), &text, &[]).expect("scenario")
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("scaling");
    g.sample_size(10);
    for files in [20u32, 200, 2000] {
        let l = scenario(files);
        let reads = run_scenario(&l, &RunOptions::default())
            .expect("run")
            .report
            .cases[0]
            .arms[0]
            .mean(experiments::report::Metric::ReadTasks)
            .max(1.0);
        g.throughput(Throughput::Elements(reads as u64));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool");
        g.bench_with_input(BenchmarkId::from_parameter(files), &l, |b, l| {
            b.iter(|| pool.install(|| run_scenario(l, &RunOptions::default()).expect("run")))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
