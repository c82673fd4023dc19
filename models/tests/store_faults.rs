//! The NIC cap holds; throttling, injected errors, losses and hedges lose no read; the same
//! seed gives the same events; bad specs give errors naming the key.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod store_common;

use models::store::{ClientEvent, StoreSpec};
use std::collections::BTreeMap;
use store_common::{closed_loop, quantile, MIB};

fn spec_with(extra: &str) -> StoreSpec {
    let base = StoreSpec::preset("s3-standard").unwrap();
    let mut yaml = String::from(
        "source: test\nfirst_byte: {distribution: lognormal, median: 27ms, p95: 75ms, max: 10s}\n\
         stream_bandwidth: {distribution: lognormal, median: 57MiB/s, sigma: 0.49, min: 25MiB/s, max: 95MiB/s}\n\
         price: {per_1000_gets_usd: 0.0004}\n",
    );
    yaml.push_str(extra);
    if !extra.contains("nic:") {
        yaml.push_str(&format!("nic: {}\n", base.nic));
    }
    StoreSpec::from_yaml(&yaml).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// Each read completes exactly once, with all its bytes, and the counters add up.
fn assert_no_read_lost(run: &store_common::Run, n: usize) {
    assert_eq!(run.done_ns.len(), n, "completed reads");
    assert!(
        run.failed.is_empty(),
        "failed: {:?}",
        run.failed.iter().next()
    );
    let want: u64 = run.lens.values().sum();
    assert_eq!(run.stats.bytes_fetched, want);
    let ok = run.attempts.iter().filter(|a| a.status == 206).count();
    assert_eq!(ok, n, "one successful attempt per read");
    assert_eq!(
        run.attempts.len() as u64,
        run.stats.gets,
        "every attempt traced"
    );
    let by_status = |s: u16| run.attempts.iter().filter(|a| a.status == s).count() as u64;
    assert_eq!(by_status(503), run.stats.responses_503);
    assert_eq!(by_status(500), run.stats.errors_500);
    assert_eq!(by_status(0), run.stats.timeouts);
    assert_eq!(
        run.stats.gets,
        n as u64 + run.stats.retries + run.stats.hedges
    );
    // Progress is monotonic and ends below the length (the completion carries the rest).
    let mut last: BTreeMap<u64, u64> = BTreeMap::new();
    for (_, e) in &run.events {
        if let ClientEvent::Progress { token, bytes_ready } = e {
            let prev = last.insert(*token, *bytes_ready).unwrap_or(0);
            assert!(*bytes_ready > prev && *bytes_ready < run.lens[token]);
        }
    }
}

#[test]
fn nic_cap_is_never_exceeded() {
    // A 1 Gbit/s NIC under 100 streams of mixed sizes: the cap binds most of the time.
    let spec = spec_with("nic: 1Gbit/s\n");
    let reads: Vec<(u64, u32)> = (0..3_000u64)
        .map(|i| ((1 + i % 23) * MIB / 2 + i * 37, 0))
        .collect();
    let run = closed_loop(&spec, 11, 100, &reads);
    assert_no_read_lost(&run, reads.len());
    let cap = 1e9 / 8.0;
    assert!(
        run.max_nic_rate <= cap * (1.0 + 1e-9),
        "max rate {}",
        run.max_nic_rate
    );
    assert!(run.max_nic_rate >= cap * 0.999, "the cap should bind");
    // Bytes delivered over any 100 ms window stay under the cap (plus one chunk per stream of
    // rounding, since a progress event reports a whole chunk at its boundary).
    let mut delivered: BTreeMap<u64, u64> = BTreeMap::new();
    let mut last: BTreeMap<u64, u64> = BTreeMap::new();
    for (t, e) in &run.events {
        let (token, now_bytes) = match e {
            ClientEvent::Progress { token, bytes_ready } => (*token, *bytes_ready),
            ClientEvent::Completed { token } => (*token, run.lens[token]),
            _ => continue,
        };
        let prev = last.insert(token, now_bytes).unwrap_or(0);
        *delivered.entry(t / 100_000_000).or_default() += now_bytes - prev;
    }
    for (w, bytes) in &delivered {
        assert!(
            *bytes as f64 <= cap * 0.1 + 100.0 * MIB as f64,
            "window {w}: {bytes} bytes"
        );
    }
    let (busy, saturated) = (run.stats.nic_busy_ns, run.stats.nic_saturated_ns);
    assert!(
        saturated > busy / 2 && saturated <= busy,
        "saturated {saturated} of busy {busy}"
    );
}

#[test]
fn retries_after_503_lose_no_read() {
    // 200 GET/s on one prefix against 64 in flight small GETs: most first attempts are throttled.
    let spec = spec_with(
        "rate_limit: {requests_per_s: 200, burst: 20}\nretry: {max_attempts: 1000, backoff_initial: 25ms, backoff_max: 2s}\n",
    );
    let n = 2_000;
    let run = closed_loop(&spec, 12, 64, &vec![(64 * 1024, 7); n]);
    assert!(
        run.stats.responses_503 > n as u64 / 2,
        "503s: {}",
        run.stats.responses_503
    );
    assert_eq!(run.stats.retries, run.stats.responses_503);
    assert_no_read_lost(&run, n);
    // Throughput settles near the limit: 2,000 reads at 200/s take about 10 s.
    let secs = run.end_ns as f64 / 1e9;
    assert!((9.0..=13.0).contains(&secs), "{secs} s");
    // Spreading over prefixes under the limit removes the throttling.
    let spread: Vec<(u64, u32)> = (0..n as u32).map(|i| (64 * 1024, i % 64)).collect();
    let run = closed_loop(&spec, 12, 64, &spread);
    assert_eq!(run.stats.responses_503, 0);
    assert_no_read_lost(&run, n);
}

#[test]
fn retries_after_errors_and_losses_lose_no_read() {
    let spec = spec_with(
        "faults: {error_rate: 0.2, loss_rate: 0.05}\ntimeout: 2s\nretry: {max_attempts: 30, backoff_initial: 25ms, backoff_max: 1s}\n",
    );
    let n = 3_000;
    let reads: Vec<(u64, u32)> = (0..n as u64).map(|i| ((i % 8 + 1) * MIB, 0)).collect();
    let run = closed_loop(&spec, 13, 64, &reads);
    let attempts = run.stats.gets as f64;
    let err = run.stats.errors_500 as f64 / attempts;
    let lost = run.stats.timeouts as f64 / attempts;
    assert!((0.18..=0.22).contains(&err), "error fraction {err}");
    assert!((0.04..=0.06).contains(&lost), "loss fraction {lost}");
    assert_no_read_lost(&run, n);
    // A lost attempt ends exactly at the timeout.
    for a in run.attempts.iter().filter(|a| a.status == 0) {
        assert_eq!(a.end_ns - a.start_ns, 2_000_000_000);
    }
}

#[test]
fn exhausted_retries_fail_the_read_and_say_why() {
    let spec = spec_with("faults: {error_rate: 0.7}\nretry: {max_attempts: 2, backoff_initial: 10ms, backoff_max: 10ms}\n");
    let n = 2_000;
    let run = closed_loop(&spec, 14, 32, &vec![(MIB, 0); n]);
    assert_eq!(run.done_ns.len() + run.failed.len(), n);
    let frac = run.failed.len() as f64 / n as f64;
    assert!(
        (0.44..=0.54).contains(&frac),
        "0.7^2 = 0.49 should fail: {frac}"
    );
    assert_eq!(run.stats.failures as usize, run.failed.len());
    assert!(run
        .failed
        .values()
        .all(|r| r == "500 InternalError after 2 attempts"));
    assert!(run
        .failed
        .keys()
        .all(|t| !run.first_byte_ns.contains_key(t)));
}

#[test]
fn hedging_cuts_the_first_byte_tail() {
    let heavy = "first_byte: {distribution: lognormal, median: 27ms, p95: 300ms, max: 10s}\n";
    let make = |hedge: &str| {
        let yaml = format!(
            "source: test\n{heavy}stream_bandwidth: {{distribution: constant, value: 60MiB/s}}\nnic: 100Gbit/s\nprice: {{per_1000_gets_usd: 0.0004}}\n{hedge}"
        );
        StoreSpec::from_yaml(&yaml).unwrap()
    };
    let n = 10_000;
    let plain = closed_loop(&make(""), 15, 32, &vec![(64 * 1024, 0); n]);
    let hedged = closed_loop(
        &make("hedge: {after: 100ms, max_hedges: 2}\n"),
        15,
        32,
        &vec![(64 * 1024, 0); n],
    );
    assert_no_read_lost(&hedged, n);
    let p99 = |r: &store_common::Run| quantile(&r.first_byte_ms(), 0.99);
    assert!(
        p99(&hedged) < 0.6 * p99(&plain),
        "p99 {} vs {}",
        p99(&hedged),
        p99(&plain)
    );
    assert!(hedged.stats.hedges > 0 && hedged.stats.aborted > 0);
    assert!(hedged.stats.aborted <= hedged.stats.hedges);
    assert!(
        hedged.stats.cost_usd > plain.stats.cost_usd,
        "hedges are billed"
    );
    assert_eq!(plain.stats.hedges, 0);
}

#[test]
fn same_seed_same_events() {
    let spec = spec_with("faults: {error_rate: 0.05, loss_rate: 0.01}\ntimeout: 1s\nhedge: {after: 150ms}\nrate_limit: {requests_per_s: 2000}\n");
    let reads: Vec<(u64, u32)> = (0..2_000u64)
        .map(|i| ((i % 5 + 1) * MIB / 3, (i % 3) as u32))
        .collect();
    let a = closed_loop(&spec, 16, 100, &reads);
    let b = closed_loop(&spec, 16, 100, &reads);
    let c = closed_loop(&spec, 17, 100, &reads);
    assert_eq!(a.events, b.events);
    assert_eq!(a.attempts, b.attempts);
    assert_eq!(a.stats, b.stats);
    assert_ne!(a.events, c.events, "another seed gives another run");
}

#[test]
fn bad_specs_name_the_key() {
    let good = "source: s\nfirst_byte: {distribution: lognormal, median: 27ms, p95: 75ms}\n\
                stream_bandwidth: {distribution: constant, value: 50MiB/s}\nnic: 10Gbit/s\nprice: {per_1000_gets_usd: 0}\n";
    assert!(StoreSpec::from_yaml(good).is_ok());
    let cases: &[(&str, &str, &str)] = &[
        ("median: 27ms", "median: -27ms", "negative"),
        ("nic: 10Gbit/s", "nic: 10000", "no unit"),
        ("nic: 10Gbit/s", "nic: 10Gbit/s\nnics: 2", "nics"),
        ("p95: 75ms}", "p95: 75ms, max: 20ms}", "first_byte.median"),
        ("p95: 75ms}", "p95: 20ms}", "first_byte.p95"),
        ("p95: 75ms}", "p95: 75ms, shape: 2}", "first_byte.shape"),
        (
            "price: {per_1000_gets_usd: 0}",
            "price: {per_1000_gets_usd: -1}",
            "price.per_1000_gets_usd",
        ),
        (
            "price: {per_1000_gets_usd: 0}",
            "price: {per_1000_gets_usd: 0, per_1000_lists_usd: -1}",
            "price.per_1000_lists_usd",
        ),
        (
            "nic: 10Gbit/s",
            "nic: 10Gbit/s\nfaults: {error_rate: 1.5}",
            "faults.error_rate",
        ),
        (
            "nic: 10Gbit/s",
            "nic: 10Gbit/s\nretry: {max_attempts: 0, backoff_initial: 1ms, backoff_max: 1s}",
            "retry.max_attempts",
        ),
        (
            "constant, value: 50MiB/s",
            "lognormal, median: 50MiB/s, sigma: 0.3",
            "stream_bandwidth.min",
        ),
        // Past the bounds: each once ran without end or aborted.
        (
            "nic: 10Gbit/s",
            "nic: 10Gbit/s\nretry: {max_attempts: 10001, backoff_initial: 1ms, backoff_max: 1s}",
            "MAX_ATTEMPTS_PER_READ",
        ),
        (
            "nic: 10Gbit/s",
            "nic: 10Gbit/s\nhedge: {after: 1ms, max_hedges: 65}",
            "MAX_HEDGES_PER_READ",
        ),
        (
            "nic: 10Gbit/s",
            "nic: 10Gbit/s\nprogress_chunk: 4095B",
            "MIN_PROGRESS_CHUNK_BYTES",
        ),
    ];
    // At the bounds: accepted (0 delivers a body at once, as a local read does).
    for extra in [
        "retry: {max_attempts: 10000, backoff_initial: 1ms, backoff_max: 1s}",
        "hedge: {after: 1ms, max_hedges: 64}",
        "progress_chunk: 4KiB",
        "progress_chunk: 0",
    ] {
        let yaml = format!("{good}{extra}\n");
        assert!(StoreSpec::from_yaml(&yaml).is_ok(), "{extra}");
    }
    for (from, to, needle) in cases {
        let yaml = good.replacen(from, to, 1);
        assert_ne!(yaml, good, "case {to} did not apply");
        let err = StoreSpec::from_yaml(&yaml).expect_err(to).to_string();
        eprintln!("{err}");
        assert!(err.contains(needle), "`{to}` gave: {err}");
    }
    // Syntax and type errors carry a line number.
    let err = StoreSpec::from_yaml(&good.replacen("nic: 10Gbit/s", "nic: 10000", 1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("line"), "{err}");
}

#[test]
fn cancel_aborts_and_counts_partial_bytes() {
    use engine::{RngStreams, Subsystem};
    use models::store::{GetRequest, S3Client};
    let yaml = "source: test\nfirst_byte: {distribution: constant, value: 10ms}\n\
                stream_bandwidth: {distribution: constant, value: 50MiB/s}\nnic: 100Gbit/s\n\
                price: {per_1000_gets_usd: 0}\nretry: {max_attempts: 3, backoff_initial: 1s, backoff_max: 1s}\n";
    let spec = StoreSpec::from_yaml(yaml).unwrap();
    let mut c = S3Client::new(&spec, RngStreams::new(1).stream(Subsystem::Store, 0)).unwrap();
    let req = |token, len| GetRequest {
        method: Default::default(),
        token,
        object: token,
        prefix: 0,
        offset: 0,
        len,
    };
    c.start(0, req(0, 100 * MIB)).unwrap();
    c.start(0, req(1, 10 * MIB)).unwrap();
    assert!(
        c.start(0, req(1, 10 * MIB)).is_err(),
        "a token in flight cannot be reused"
    );
    let mut out = Vec::new();
    // 10 ms first byte, then 50 MiB/s: at 1.01 s read 0 has 50 MiB.
    c.advance(1_010_000_000, &mut out);
    assert!(
        out.contains(&(210_000_000, ClientEvent::Completed { token: 1 })),
        "{out:?}"
    );
    assert!(c.cancel(1_010_000_000, 0));
    assert!(!c.cancel(1_010_000_000, 0));
    let s = c.stats();
    assert_eq!(s.bytes_fetched, 10 * MIB + 50 * MIB);
    assert_eq!((s.reads_cancelled, s.aborted), (1, 1));
    assert_eq!(c.attempts_in_flight(), 0);
    assert_eq!(c.nic_rate_bytes_per_s(), 0.0);
    // The token is free again; the old read sends nothing more.
    c.start(1_010_000_000, req(0, MIB)).unwrap();
    out.clear();
    while let Some(t) = c.next_event_ns() {
        c.advance(t, &mut out);
    }
    let done: Vec<_> = out
        .iter()
        .filter(|(_, e)| matches!(e, ClientEvent::Completed { .. }))
        .collect();
    assert_eq!(
        done,
        vec![&(1_040_000_000, ClientEvent::Completed { token: 0 })]
    );
}

#[test]
fn first_byte_grows_with_size_when_asked() {
    use engine::{RngStreams, Subsystem};
    use models::store::{GetRequest, S3Client};
    let yaml = "source: test\nfirst_byte: {distribution: constant, value: 20ms}\nfirst_byte_per_mib: 10ms\n\
                stream_bandwidth: {distribution: constant, value: 100MiB/s}\nnic: 100Gbit/s\n\
                price: {per_1000_gets_usd: 0}\n";
    let spec = StoreSpec::from_yaml(yaml).unwrap();
    let mut c = S3Client::new(&spec, RngStreams::new(1).stream(Subsystem::Store, 0)).unwrap();
    c.start(
        0,
        GetRequest {
            method: Default::default(),
            token: 9,
            object: 1,
            prefix: 0,
            offset: 0,
            len: 4 * MIB,
        },
    )
    .unwrap();
    let mut out = Vec::new();
    while let Some(t) = c.next_event_ns() {
        c.advance(t, &mut out);
    }
    // 20 ms + 4 x 10 ms to the first byte, then 4 MiB at 100 MiB/s (40 ms), progress per MiB.
    assert_eq!(
        out.first(),
        Some(&(60_000_000, ClientEvent::FirstByte { token: 9 }))
    );
    assert_eq!(
        out.get(1),
        Some(&(
            70_000_000,
            ClientEvent::Progress {
                token: 9,
                bytes_ready: MIB
            }
        ))
    );
    assert_eq!(
        out.last(),
        Some(&(100_000_000, ClientEvent::Completed { token: 9 }))
    );
    assert_eq!(out.len(), 5);
}

/// Every attempt draws its first byte, bandwidth and outcome in the same order whatever
/// happens, and the retry backoff's jitter comes from a stream of its own: so the k-th attempt
/// has the same first byte with and without injected errors (the jitter drew from the
/// attempts' stream until 2026-12-07, and every attempt after the first retry moved).
#[test]
fn a_retry_does_not_shift_later_attempts_samples() {
    let reads: Vec<(u64, u32)> = (0..400).map(|_| (MIB, 0)).collect();
    let clean = closed_loop(&spec_with(""), 21, 1, &reads);
    let faulty = closed_loop(
        &spec_with("faults: {error_rate: 0.2}\nretry: {max_attempts: 30, backoff_initial: 25ms, backoff_max: 1s}\n"),
        21,
        1,
        &reads,
    );
    assert!(
        faulty.stats.retries > 20,
        "{} retries",
        faulty.stats.retries
    );
    let first_byte = |a: &models::store::Attempt| a.first_byte_ns.map(|f| f - a.start_ns);
    let mut compared = 0;
    for (k, (c, f)) in clean.attempts.iter().zip(&faulty.attempts).enumerate() {
        if c.status == 206 && f.status == 206 {
            assert_eq!(first_byte(c), first_byte(f), "attempt {k}");
            compared += 1;
        }
    }
    assert!(compared > 250, "only {compared} attempts compared");
}
