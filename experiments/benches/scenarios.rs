//! `sim run` on every shipped scenario, one thread, and the cost per simulated GET:
//! `cargo bench -p experiments --bench scenarios`. Criterion's throughput is set to the GETs the
//! whole run simulates (every case, arm and replication), so `thrpt` reads as simulated GETs per
//! second and its inverse is the cost per GET the README's performance table quotes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a bench fails loudly where it stops

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use drive::metric::Metric;
use experiments::run::{run_scenario, RunOptions};
use std::path::Path;

/// The GETs of one whole run of `loaded`: the sum over cases, arms and replications.
fn simulated_gets(loaded: &scenario::LoadedScenario) -> u64 {
    let report = run_scenario(loaded, &RunOptions::default())
        .expect("run")
        .report;
    let gets: f64 = report
        .cases
        .iter()
        .flat_map(|c| &c.arms)
        .map(|a| a.mean(Metric::Gets) * a.runs.len() as f64)
        .sum();
    gets.round().max(1.0) as u64
}

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut names: Vec<_> = std::fs::read_dir(root.join("scenarios"))
        .expect("scenarios/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    names.sort();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let mut g = c.benchmark_group("scenario");
    g.sample_size(10);
    for path in names {
        // Relative paths inside a scenario (recorded layouts) resolve from the repository root.
        std::env::set_current_dir(&root).expect("cd");
        let loaded = scenario::load(&path, &[]).expect("shipped scenario");
        let gets = pool.install(|| simulated_gets(&loaded));
        let name = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .to_string();
        eprintln!("{name}: {gets} simulated GETs a run");
        g.throughput(Throughput::Elements(gets));
        g.bench_with_input(BenchmarkId::from_parameter(&name), &loaded, |b, l| {
            b.iter(|| pool.install(|| run_scenario(l, &RunOptions::default()).expect("run")))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
