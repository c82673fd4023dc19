//! Every shape of fitted model loads as a `models::store::StoreSpec`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;

use common::{to_sim_csv, Latency, Synth};
use models::store::{DistKind, StoreSpec};
use tracefit::{fit_store, parse_bytes, FitOptions, ParseOptions, ParsedTrace};

fn trace(requests: usize) -> ParsedTrace {
    let synth = Synth {
        requests,
        latency: Latency::Lognormal {
            median_ns: 27e6,
            sigma: 0.5,
        },
        ns_per_mib: 0.0,
        bandwidth_median: 57.0 * 1024.0 * 1024.0,
        bandwidth_sigma: 0.3,
        rate_per_s: 500.0,
        error_share: 0.0,
        seed: 9,
    };
    parse_bytes(
        to_sim_csv(&synth.generate()).as_bytes(),
        "y.csv",
        &ParseOptions::default(),
    )
    .unwrap()
}

fn load(yaml: &str) -> StoreSpec {
    StoreSpec::from_yaml(yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

#[test]
fn each_candidate_writes_a_loadable_model() {
    let mut fit = fit_store(&trace(3_000), &FitOptions::default()).unwrap();
    let json: serde_json::Value = serde_json::from_str(&fit.to_json()).unwrap();
    assert_eq!(
        json["first_byte"]["candidates"].as_array().map(|a| a.len()),
        Some(3)
    );
    let names: Vec<&str> = fit
        .first_byte
        .candidates
        .iter()
        .map(|c| c.dist.name())
        .collect();
    assert_eq!(names, ["lognormal", "gamma", "empirical"]);
    for (i, kind) in [DistKind::Lognormal, DistKind::Gamma, DistKind::Empirical]
        .into_iter()
        .enumerate()
    {
        fit.first_byte.chosen = i;
        let spec = load(&fit.to_yaml("m"));
        assert_eq!(spec.first_byte.distribution, kind);
        let median = models::store::Sampler::new("first_byte", &spec.first_byte)
            .unwrap()
            .median();
        if let Some(m) = median {
            let want = fit.first_byte.candidates[i].dist.median();
            assert!(
                (m / want - 1.0).abs() < 0.01,
                "{kind:?}: median {m} vs {want}"
            );
        }
    }
    let candidates = fit
        .stream_bandwidth
        .as_ref()
        .map(|b| b.candidates.len())
        .unwrap_or(0);
    assert_eq!(candidates, 3);
    for i in 0..candidates {
        if let Some(bw) = fit.stream_bandwidth.as_mut() {
            bw.chosen = i;
        }
        load(&fit.to_yaml("m"));
    }
}

#[test]
fn throttling_becomes_a_rate_limit_and_errors_become_faults() {
    let mut t = trace(3_000);
    for (i, r) in t.records.iter_mut().enumerate() {
        if i % 50 == 0 {
            r.status = 503;
        } else if i % 101 == 0 {
            r.status = 0;
        }
    }
    let fit = fit_store(&t, &FitOptions::default()).unwrap();
    let spec = load(&fit.to_yaml("throttled"));
    let limit = spec.rate_limit.expect("a rate limit from the 503s");
    assert!(limit.requests_per_s > 0.0 && limit.requests_per_s <= fit.rate.peak_per_s as f64);
    assert!(
        (fit.errors.throttled_rate - 0.02).abs() < 0.001,
        "{}",
        fit.errors.throttled_rate
    );
    assert!((spec.faults.loss_rate - fit.errors.timeout_rate).abs() < 1e-6);
    assert!(spec.faults.loss_rate > 0.005);
}

#[test]
fn without_large_requests_bandwidth_is_not_measured_and_says_so() {
    let mut t = trace(500);
    t.records.retain(|r| r.bytes < 1 << 20);
    let fit = fit_store(&t, &FitOptions::default()).unwrap();
    assert!(fit.stream_bandwidth.is_none());
    assert!(fit.size_slope.is_none());
    let yaml = fit.to_yaml("small");
    assert!(yaml.contains("NOT MEASURED"), "{yaml}");
    load(&yaml);
}

#[test]
fn a_trace_without_usable_latencies_is_an_error() {
    let mut t = trace(10);
    for r in &mut t.records {
        r.status = 500;
    }
    let err = fit_store(&t, &FitOptions::default()).unwrap_err();
    assert!(err.to_string().contains("first-byte latency"), "{err}");
}

/// A sim trace of 16 GETs of `len` bytes, each `first_byte_ns` to its first byte and
/// `transfer_ns(i)` to its last.
fn degenerate(
    len: u64,
    first_byte_ns: impl Fn(u64) -> u64,
    transfer_ns: impl Fn(u64) -> u64,
) -> ParsedTrace {
    let mut csv = String::from(
        "case,arm,replication,query,start_ns,first_byte_ns,end_ns,object,offset_bytes,length_bytes,status,served_by,attempt,hedge\n",
    );
    for i in 0..16u64 {
        let s = i * 1_000_000_000_000;
        let f = s + first_byte_ns(i);
        csv.push_str(&format!(
            "c,a,0,q,{s},{f},{},{i},0,{len},200,store,0,false\n",
            f + transfer_ns(i)
        ));
    }
    parse_bytes(csv.as_bytes(), "d.csv", &ParseOptions::default()).unwrap()
}

#[test]
fn a_point_mass_is_a_constant_model_that_loads() {
    // Issue 20: every latency equal gave a sigma of 1e-7 printed as `0.000000`, which the loader
    // refused; a near-equal sample took seconds in the gamma CDF at shape 4e7.
    for trace in [
        degenerate(8 << 20, |_| 30_000_000, |_| 100_000_000),
        degenerate(4 << 20, |i| 30_000_000 + i * 1000, |_| 100_000_000_000),
    ] {
        let fit = fit_store(&trace, &FitOptions::default()).unwrap();
        let yaml = fit.to_checked_yaml("d").unwrap();
        let spec = load(&yaml);
        assert_eq!(spec.first_byte.distribution, DistKind::Constant, "{yaml}");
        assert_eq!(
            spec.stream_bandwidth.distribution,
            DistKind::Constant,
            "{yaml}"
        );
    }
}

#[test]
fn a_fit_that_would_not_load_is_an_error_not_a_file() {
    // Streams slower than 1 B/s round the fitted floor to `min: 0B/s`, which the loader refuses.
    let trace = degenerate(
        16,
        |i| 30_000_000 + i * 1_000_000,
        |i| 100_000_000_000 + i * 10_000_000_000,
    );
    let fit = fit_store(
        &trace,
        &FitOptions {
            bandwidth_min_bytes: 1,
            ..FitOptions::default()
        },
    )
    .unwrap();
    let e = fit.to_checked_yaml("d").unwrap_err().to_string();
    assert!(e.contains("does not load"), "{e}");
    assert!(e.contains("stream_bandwidth"), "{e}");
}
