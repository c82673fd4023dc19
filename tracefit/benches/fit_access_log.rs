//! Parsing and fitting 1 M S3 access-log lines (the "takes seconds" target).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use criterion::{criterion_group, criterion_main, Criterion};

#[path = "../tests/common/mod.rs"]
mod common;

use common::{to_access_log, Latency, Synth};
use tracefit::{fit_store, parse_bytes, FitOptions, ParseOptions};

fn bench(c: &mut Criterion) {
    let synth = Synth {
        requests: 1_000_000,
        latency: Latency::Lognormal {
            median_ns: 27e6,
            sigma: 0.5,
        },
        ns_per_mib: 20e6,
        bandwidth_median: 57.0 * 1024.0 * 1024.0,
        bandwidth_sigma: 0.3,
        rate_per_s: 3000.0,
        error_share: 0.001,
        seed: 1,
    };
    let log = to_access_log(&synth.generate());
    eprintln!(
        "input: {} lines, {} MB",
        synth.requests,
        log.len() / 1_000_000
    );
    let mut group = c.benchmark_group("access_log_1M");
    group.sample_size(10);
    group.bench_function("parse", |b| {
        b.iter(|| {
            parse_bytes(log.as_bytes(), "bench.log", &ParseOptions::default())
                .map(|t| t.records.len())
        })
    });
    let trace = parse_bytes(log.as_bytes(), "bench.log", &ParseOptions::default()).expect("parses");
    group.bench_function("fit", |b| {
        b.iter(|| fit_store(&trace, &FitOptions::default()).map(|f| f.records))
    });
    group.bench_function("parse_and_fit", |b| {
        b.iter(|| {
            let t = parse_bytes(log.as_bytes(), "bench.log", &ParseOptions::default())?;
            fit_store(&t, &FitOptions::default()).map(|f| f.records)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
