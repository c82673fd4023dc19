//! Closed-loop replay of a trace `sim run` recorded on a known store model, against the same
//! model: the makespan comes back, and one worker takes the sum of the durations.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;
use common::*;
use experiments::run::RunOptions;
use tracefit::{replay_closed_loop, ParseOptions, ParsedTrace, ReplayMode};

/// The base arm's rows of a 300-file run on s3-standard (600 GETs).
fn base_trace() -> ParsedTrace {
    let l = parse(&small(300, 2, "")).unwrap();
    let out = run(
        &l,
        &RunOptions {
            trace: true,
            ..Default::default()
        },
    );
    let mut parsed =
        tracefit::parse_bytes(out.trace_csv.as_bytes(), "sim", &ParseOptions::default()).unwrap();
    assert_eq!(parsed.malformed_count, 0);
    parsed
        .records
        .retain(|r| r.sim.as_ref().is_some_and(|s| s.arm == "base"));
    parsed
}

/// Tolerance 10%: the worker count is the recorded mean in flight rounded (here about 4, so
/// up to 12% off in the worst case; the measured mean is close to a whole number because the
/// reader keeps its IO slots busy: 3.90 here), plus sampling noise on 600 requests.
/// Measured: -4.6% (4 workers).
#[test]
fn closed_loop_against_the_recording_model_reproduces_the_makespan() {
    let trace = base_trace();
    let spec = models::store::StoreSpec::preset("s3-standard").unwrap();
    let report = replay_closed_loop(&trace, &spec, 5, None).unwrap();
    let table = report.to_table();
    eprintln!("{table}");
    assert!(report.requests >= 500, "{table}");
    assert_eq!(report.failed, 0);
    let ReplayMode::ClosedLoop { concurrency } = report.mode else {
        panic!("{table}")
    };
    assert!(concurrency >= 2, "{table}");
    assert!(report.makespan_relative_error.abs() < 0.10, "{table}");
    // Durations are the model's whatever the loop: p50 within 10%.
    let p50 = report
        .rows
        .iter()
        .find(|r| r.metric == "duration" && r.p == 0.5)
        .unwrap();
    assert!(p50.relative_error.abs() < 0.10, "{table}");
}

/// One worker: back to back, the makespan is the sum of the (simulated) durations, which is
/// the sum of the recorded ones within 10% (same model, 600 requests; measured -2.6%), and several times the
/// recorded makespan (the recording overlapped requests).
#[test]
fn closed_loop_at_one_worker_takes_about_the_sum_of_the_durations() {
    let trace = base_trace();
    let spec = models::store::StoreSpec::preset("s3-standard").unwrap();
    let report = replay_closed_loop(&trace, &spec, 5, Some(1)).unwrap();
    let table = report.to_table();
    eprintln!("{table}");
    let ratio = report.makespan_simulated_ns / report.total_recorded_ns;
    assert!((ratio - 1.0).abs() < 0.10, "{ratio}\n{table}");
    assert!(
        report.makespan_simulated_ns > 1.5 * report.makespan_recorded_ns.unwrap(),
        "{table}"
    );
}
