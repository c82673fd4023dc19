//! Round trip: sample known latencies and bandwidths with a seeded RNG, write them as a trace
//! in both formats, parse, fit, and recover the parameters within stated tolerances.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;

use common::{to_access_log, to_sim_csv, Latency, Synth};
use tracefit::fit::FittedDist;
use tracefit::{fit_store, parse_bytes, FitOptions, ParseOptions, StoreFit, TraceFormat};

const MS: f64 = 1e6;
const MIB: f64 = 1024.0 * 1024.0;

fn fits(synth: &Synth) -> Vec<StoreFit> {
    let reqs = synth.generate();
    let mut out = Vec::new();
    for (text, name, format) in [
        (to_sim_csv(&reqs), "synthetic.csv", TraceFormat::SimTrace),
        (
            to_access_log(&reqs),
            "synthetic.log",
            TraceFormat::S3AccessLog,
        ),
    ] {
        let trace = parse_bytes(
            text.as_bytes(),
            name,
            &ParseOptions {
                strict: true,
                ..ParseOptions::default()
            },
        )
        .unwrap();
        assert_eq!(trace.format, format);
        assert_eq!(trace.records.len(), synth.requests);
        out.push(fit_store(&trace, &FitOptions::default()).unwrap());
    }
    out
}

fn within(what: &str, got: f64, want: f64, rel: f64) {
    assert!(
        (got / want - 1.0).abs() <= rel,
        "{what}: got {got}, want {want} within {}%",
        rel * 100.0
    );
}

fn lognormal_of(fit: &tracefit::fit::DistFit) -> (f64, f64) {
    match fit.best().map(|c| &c.dist) {
        Some(FittedDist::Lognormal { mu, sigma }) => (mu.exp(), *sigma),
        other => panic!("expected a lognormal to be chosen, got {other:?}"),
    }
}

/// Tolerances at 20k requests: latency median 5%, sigma 10%; bandwidth median 5%, sigma 10%
/// (from 10k large requests); mean rate 5%; error share within 0.5 points.
#[test]
fn lognormal_latency_and_bandwidth_are_recovered_from_both_formats() {
    let synth = Synth {
        requests: 20_000,
        latency: Latency::Lognormal {
            median_ns: 27.0 * MS,
            sigma: 0.5,
        },
        ns_per_mib: 0.0,
        bandwidth_median: 57.0 * MIB,
        bandwidth_sigma: 0.3,
        rate_per_s: 400.0,
        error_share: 0.01,
        seed: 7,
    };
    for fit in fits(&synth) {
        let (median, sigma) = lognormal_of(&fit.first_byte);
        within("latency median", median, 27.0 * MS, 0.05);
        within("latency sigma", sigma, 0.5, 0.10);
        let bw = fit.stream_bandwidth.as_ref().expect("bandwidth measured");
        let (bw_median, bw_sigma) = lognormal_of(bw);
        within("bandwidth median", bw_median, 57.0 * MIB, 0.05);
        within("bandwidth sigma", bw_sigma, 0.3, 0.10);
        within("mean rate", fit.rate.mean_per_s, 400.0, 0.05);
        assert!(
            (fit.errors.server_error_rate - 0.01).abs() < 0.005,
            "{}",
            fit.errors.server_error_rate
        );
        assert!(
            fit.rate.peak_per_s as f64 > 400.0,
            "peak {} should exceed the mean",
            fit.rate.peak_per_s
        );
        let slope = fit.size_slope.as_ref().expect("slope fitted");
        assert!(
            !slope.applied,
            "no size dependence was sampled, got {slope:?}"
        );
    }
}

#[test]
fn gamma_latency_is_recognised_and_recovered() {
    let synth = Synth {
        requests: 20_000,
        latency: Latency::Gamma {
            mean_ns: 30.0 * MS,
            shape: 4.0,
        },
        ns_per_mib: 0.0,
        bandwidth_median: 80.0 * MIB,
        bandwidth_sigma: 0.2,
        rate_per_s: 1000.0,
        error_share: 0.0,
        seed: 11,
    };
    for fit in fits(&synth) {
        match fit.first_byte.best().map(|c| &c.dist) {
            Some(FittedDist::Gamma { shape, scale }) => {
                within("gamma mean", shape * scale, 30.0 * MS, 0.05);
                within("gamma shape", *shape, 4.0, 0.10);
            }
            other => panic!("{}: expected gamma, got {other:?}", fit.source),
        }
        assert_eq!(fit.errors.error_rate, 0.0);
    }
}

/// First bytes under a millisecond (a server on loopback): most access-log values are `0`.
/// They are the cell [0, 0.5 ms], not missing; dropping them fitted the slow remainder alone
/// (a median of 1 ms or more where 0.4 ms was drawn).
#[test]
fn sub_millisecond_first_bytes_in_an_access_log_stay_in_the_fit() {
    let synth = Synth {
        requests: 5_000,
        latency: Latency::Lognormal {
            median_ns: 0.4 * MS,
            sigma: 0.5,
        },
        ns_per_mib: 0.0,
        bandwidth_median: 80.0 * MIB,
        bandwidth_sigma: 0.2,
        rate_per_s: 1000.0,
        error_share: 0.0,
        seed: 5,
    };
    let fits = fits(&synth);
    let log = &fits[1];
    assert_eq!(log.format, TraceFormat::S3AccessLog);
    assert!(
        2 * log.latency_below_resolution > log.latency_requests,
        "{} of {}",
        log.latency_below_resolution,
        log.latency_requests
    );
    assert_eq!(log.latency_dropped, 0);
    let median = log
        .first_byte
        .best()
        .map(|c| c.dist.quantile_by_bisection(0.5))
        .unwrap();
    assert!(
        (0.2 * MS..0.7 * MS).contains(&median),
        "median {median} ns where 0.4 ms was drawn"
    );
    // The exact trace has none under its resolution.
    assert_eq!(fits[0].latency_below_resolution, 0);
    let yaml = log.to_yaml("fitted");
    assert!(yaml.contains("under the log's 1 ms resolution"), "{yaml}");
}

#[test]
fn size_dependence_is_measured_and_removed() {
    let synth = Synth {
        requests: 20_000,
        latency: Latency::Lognormal {
            median_ns: 27.0 * MS,
            sigma: 0.4,
        },
        ns_per_mib: 20.0 * MS,
        bandwidth_median: 57.0 * MIB,
        bandwidth_sigma: 0.3,
        rate_per_s: 400.0,
        error_share: 0.0,
        seed: 13,
    };
    for fit in fits(&synth) {
        let slope = fit.size_slope.as_ref().expect("slope");
        assert!(slope.applied);
        within("ns per MiB", slope.ns_per_mib, 20.0 * MS, 0.10);
        let (median, sigma) = lognormal_of(&fit.first_byte);
        within("de-trended median", median, 27.0 * MS, 0.05);
        within("de-trended sigma", sigma, 0.4, 0.10);
    }
}

#[test]
fn fitted_yaml_loads_as_a_store_spec_with_the_fitted_values() {
    let synth = Synth {
        requests: 5_000,
        latency: Latency::Lognormal {
            median_ns: 27.0 * MS,
            sigma: 0.5,
        },
        ns_per_mib: 15.0 * MS,
        bandwidth_median: 57.0 * MIB,
        bandwidth_sigma: 0.3,
        rate_per_s: 400.0,
        error_share: 0.02,
        seed: 17,
    };
    for fit in fits(&synth) {
        let yaml = fit.to_yaml("fitted");
        let spec =
            models::store::StoreSpec::from_yaml(&yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"));
        assert_eq!(spec.name, "fitted");
        assert!(spec.source.contains(&fit.source), "{}", spec.source);
        assert!(yaml.contains("D = "), "fit quality in comments:\n{yaml}");
        let (median, sigma) = lognormal_of(&fit.first_byte);
        within(
            "YAML median",
            spec.first_byte.median.unwrap().0 as f64,
            median,
            0.001,
        );
        within("YAML sigma", spec.first_byte.sigma.unwrap(), sigma, 0.001);
        within(
            "YAML per MiB",
            spec.first_byte_per_mib.0 as f64,
            fit.size_slope.as_ref().unwrap().ns_per_mib,
            0.001,
        );
        within(
            "YAML error rate",
            spec.faults.error_rate,
            fit.errors.server_error_rate,
            0.001,
        );
        assert!(spec.stream_bandwidth.min.unwrap().0 > 0.0);
    }
}
