//! The round trip on the project's own store model: run a known `StoreSpec` open loop,
//! record its attempts as a trace in both formats, fit, and recover the known parameters.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;

use common::{to_access_log, Req};
use models::store::{Attempt, GetRequest, S3Client, StoreSpec};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use tracefit::fit::FittedDist;
use tracefit::{
    fit_store, parse_bytes, replay_open_loop, write_sim_trace, FitOptions, Operation, ParseOptions,
    ServedBy, SimLabels, TraceRecord,
};

const KNOWN: &str = "
name: known
source: tracefit round-trip test
first_byte:
  distribution: lognormal
  median: 27ms
  sigma: 0.5
first_byte_per_mib: 5ms
stream_bandwidth:
  distribution: lognormal
  median: 57MiB/s
  sigma: 0.3
  min: 1MiB/s
  max: 10GiB/s
nic: 1000Gbit/s
faults:
  error_rate: 0.01
price:
  per_1000_gets_usd: 0.0004
";

/// Runs `spec` open loop on `reads` GETs at 200/s with a mix of sizes; returns its attempts.
fn run_model(spec: &StoreSpec, reads: usize) -> Vec<Attempt> {
    let mut client = S3Client::new(spec, Pcg64::seed_from_u64(1)).unwrap();
    client.set_trace(true);
    let mut rng = Pcg64::seed_from_u64(2);
    let mut events = Vec::new();
    let mut next_start = 0u64;
    for token in 0..reads as u64 {
        let len = if token % 2 == 0 {
            rng.random_range(64 * 1024..1024 * 1024)
        } else {
            rng.random_range(4 << 20..16 << 20)
        };
        while let Some(t) = client.next_event_ns().filter(|t| *t <= next_start) {
            client.advance(t, &mut events);
        }
        let req = GetRequest {
            method: Default::default(),
            token,
            object: token % 97,
            prefix: 0,
            offset: 0,
            len,
        };
        client.start(next_start, req).unwrap();
        next_start += 5_000_000;
    }
    while let Some(t) = client.next_event_ns() {
        client.advance(t, &mut events);
    }
    let mut attempts = Vec::new();
    client.drain_attempts(&mut attempts);
    attempts
}

fn to_records(attempts: &[Attempt]) -> Vec<TraceRecord> {
    attempts
        .iter()
        .enumerate()
        .map(|(i, a)| TraceRecord {
            line: i as u64 + 2,
            start_ns: a.start_ns,
            first_byte_latency_ns: a.first_byte_ns.map(|f| f - a.start_ns),
            total_ns: Some(a.end_ns - a.start_ns),
            bytes: if a.status == 206 { a.len } else { 0 },
            object_size_bytes: None,
            object: a.object.to_string(),
            offset_bytes: Some(a.offset),
            status: a.status,
            operation: Operation::Get,
            served_by: ServedBy::Store,
            sim: Some(SimLabels {
                attempt: a.attempt,
                hedge: a.hedge,
                ..SimLabels::default()
            }),
            needed: None,
        })
        .collect()
}

fn to_reqs(attempts: &[Attempt]) -> Vec<Req> {
    attempts
        .iter()
        .map(|a| {
            let first = a.first_byte_ns.unwrap_or(a.end_ns) - a.start_ns;
            Req {
                start_ns: a.start_ns + 1_700_000_000_000_000_000,
                first_byte_ns: first,
                transfer_ns: a.end_ns - a.start_ns - first,
                bytes: a.len,
                status: if a.status == 206 { 206 } else { 500 },
            }
        })
        .collect()
}

/// Tolerances at 20k reads: latency median 5%, sigma 10%, per-MiB slope 10%, bandwidth median
/// 5% and sigma 10%, error rate within 0.3 points.
#[test]
fn a_known_store_model_is_recovered_from_its_own_trace() {
    let spec = StoreSpec::from_yaml(KNOWN).unwrap();
    let attempts = run_model(&spec, 20_000);
    assert!(attempts.len() >= 20_000);
    let mut csv = Vec::new();
    write_sim_trace(&to_records(&attempts), &mut csv).unwrap();
    let log = to_access_log(&to_reqs(&attempts));
    for (bytes, name) in [(csv, "model.csv"), (log.into_bytes(), "model.log")] {
        let trace = parse_bytes(
            &bytes,
            name,
            &ParseOptions {
                strict: true,
                ..ParseOptions::default()
            },
        )
        .unwrap();
        let fit = fit_store(&trace, &FitOptions::default()).unwrap();
        let Some(FittedDist::Lognormal { mu, sigma }) =
            fit.first_byte.best().map(|c| c.dist.clone())
        else {
            panic!(
                "{name}: expected lognormal first byte:\n{}",
                fit.to_yaml("x")
            );
        };
        let near = |what: &str, got: f64, want: f64, tol: f64| {
            assert!(
                (got / want - 1.0).abs() <= tol,
                "{name}: {what} {got} vs {want}\n{}",
                fit.to_yaml("x")
            );
        };
        near("median", mu.exp(), 27e6, 0.05);
        near("sigma", sigma, 0.5, 0.10);
        let slope = fit.size_slope.as_ref().unwrap();
        assert!(slope.applied);
        near("per MiB", slope.ns_per_mib, 5e6, 0.10);
        let Some(FittedDist::Lognormal { mu, sigma }) = fit
            .stream_bandwidth
            .as_ref()
            .and_then(|b| b.best())
            .map(|c| c.dist.clone())
        else {
            panic!("{name}: expected lognormal bandwidth");
        };
        near("bandwidth median", mu.exp(), 57.0 * 1024.0 * 1024.0, 0.05);
        near("bandwidth sigma", sigma, 0.3, 0.10);
        assert!(
            (fit.errors.server_error_rate - 0.01).abs() < 0.003,
            "{}",
            fit.errors.server_error_rate
        );

        // And replaying the trace against the fitted model reproduces p50 and p90 (5%).
        let fitted = StoreSpec::from_yaml(&fit.to_yaml("fitted")).unwrap();
        let report = replay_open_loop(&trace, &fitted, 3).unwrap();
        for row in report.rows.iter().filter(|r| r.p < 0.95) {
            assert!(
                row.relative_error.abs() < 0.05,
                "{name}:\n{}",
                report.to_table()
            );
        }
    }
}
