//! Cost of the store model as a run grows (a measurement, not a timed assertion: run with
//! `cargo test --release -p models --test store_scale -- --ignored --nocapture`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use engine::{RngStreams, Subsystem};
use models::store::{ClientEvent, GetRequest, S3Client, StoreSpec};
use std::time::Instant;

const MIB: u64 = 1 << 20;

/// A lean closed-loop driver (no trace, no bookkeeping) so that the model's own cost shows.
fn run(spec: &StoreSpec, n: u64, len: u64, in_flight: u64) -> (u64, u64) {
    let mut client = S3Client::new(spec, RngStreams::new(1).stream(Subsystem::Store, 0)).unwrap();
    let mut next = 0u64;
    let start = |c: &mut S3Client, now: u64, next: &mut u64| {
        if *next < n {
            c.start(
                now,
                GetRequest {
                    method: Default::default(),
                    token: *next,
                    object: *next,
                    prefix: 0,
                    offset: 0,
                    len,
                },
            )
            .unwrap();
            *next += 1;
        }
    };
    for _ in 0..in_flight {
        start(&mut client, 0, &mut next);
    }
    let (mut events, mut done, mut end) = (0u64, 0u64, 0u64);
    let mut buf = Vec::new();
    while let Some(t) = client.next_event_ns() {
        client.advance(t, &mut buf);
        for (at, e) in buf.drain(..) {
            events += 1;
            end = at;
            if let ClientEvent::Completed { .. } | ClientEvent::Failed { .. } = e {
                done += 1;
                start(&mut client, at, &mut next);
            }
        }
    }
    assert_eq!(done, n);
    (events, end)
}

#[test]
#[ignore = "a measurement; run in release"]
fn cost_grows_linearly_with_gets() {
    let spec = StoreSpec::preset("s3-standard").unwrap();
    for (n, len) in [
        (10_000u64, 16 * MIB),
        (100_000, 16 * MIB),
        (10_000, MIB),
        (100_000, MIB),
        (1_000_000, 64 * 1024),
    ] {
        let t = Instant::now();
        let (events, end_ns) = run(&spec, n, len, 250);
        let secs = t.elapsed().as_secs_f64();
        eprintln!(
            "{n} GETs of {} at 250 in flight: {events} events in {secs:.3} s wall ({:.2} us per GET, {:.2} M events/s), virtual {:.1} s",
            units::format_bytes(len),
            secs * 1e6 / n as f64,
            events as f64 / secs / 1e6,
            end_ns as f64 / 1e9
        );
    }
}
