//! Coalescing 100k needed ranges under each preset family (the simulator calls `coalesce`
//! about 100k times per run, mostly with far fewer ranges; this bounds the per-range cost).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use std::hint::black_box;

use coalescer::{coalesce, CoalescePolicy, LazyCoalescer, NeededRange, NothingCached};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use layout::ByteRange;

const RANGES: usize = 100_000;

/// A deterministic mix of page-sized and chunk-sized ranges with gaps from 0 to a few MiB.
fn ranges() -> Vec<NeededRange> {
    const SIZES: [u64; 7] = [640, 8_192, 25_000, 70_000, 300_000, 1 << 20, 5 << 20];
    const GAPS: [u64; 5] = [0, 4_096, 100_000, 1 << 20, 3_400_000];
    let mut at = 0;
    (0..RANGES)
        .map(|k| {
            let start = at + GAPS[k % GAPS.len()];
            at = start + SIZES[(k * 3) % SIZES.len()];
            NeededRange::new(ByteRange::new(start, at))
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let needed = ranges();
    let mut group = c.benchmark_group("coalesce_100k_ranges");
    group.throughput(Throughput::Elements(RANGES as u64));
    for name in [
        "clickhouse-base",
        "clickhouse-redesign",
        "arrow-rs",
        "trino",
        "polars",
    ] {
        let policy = CoalescePolicy::preset(name).expect("preset exists");
        group.bench_function(name, |b| {
            b.iter(|| coalesce(black_box(&needed), &NothingCached, &policy).map(|t| t.len()))
        });
    }
    group.bench_function("lazy-clickhouse-base-reverse-order", |b| {
        b.iter(|| {
            let mut lazy = LazyCoalescer::new(needed.clone(), 4 << 20, 0).expect("valid input");
            let mut tasks = 0;
            for i in (0..RANGES as u32).rev() {
                tasks += usize::from(matches!(lazy.task_for(i), Ok(Some(_))));
            }
            tasks
        })
    });
    group.finish();

    // The common call: one row group's few dozen ranges.
    let small: Vec<NeededRange> = needed.iter().take(20).copied().collect();
    let mut group = c.benchmark_group("coalesce_20_ranges");
    for name in ["clickhouse-base", "clickhouse-redesign", "arrow-rs"] {
        let policy = CoalescePolicy::preset(name).expect("preset exists");
        group.bench_function(name, |b| {
            b.iter(|| coalesce(black_box(&small), &NothingCached, &policy).map(|t| t.len()))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
