//! The client's CPU per request delays when each request goes out, a pool's thread count at a
//! time, and the request's first byte follows from then.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use engine::{RngStreams, Subsystem};
use models::store::{ClientEvent, GetRequest, RequestCpu, S3Client, StoreSpec};

const MS: u64 = 1_000_000;

/// Four 1-byte GETs sent at 0 with `cpu`: each read's first byte time and each attempt's start.
fn burst(cpu: RequestCpu) -> (Vec<u64>, Vec<u64>) {
    let spec = StoreSpec::from_yaml(
        "source: test\nfirst_byte: {distribution: constant, value: 30ms}\n\
         stream_bandwidth: {distribution: constant, value: 1GiB/s}\nnic: 100GiB/s\n\
         price: {per_1000_gets_usd: 0.0004}\n",
    )
    .unwrap();
    let mut client = S3Client::new(&spec, RngStreams::new(1).stream(Subsystem::Store, 0)).unwrap();
    client.set_trace(true);
    client.set_request_cpu(cpu);
    for token in 0..4 {
        let req = GetRequest {
            method: Default::default(),
            token,
            object: token,
            prefix: 0,
            offset: 0,
            len: 1,
        };
        client.start(0, req).unwrap();
    }
    let mut first_bytes = vec![0; 4];
    let mut out = Vec::new();
    while let Some(t) = client.next_event_ns() {
        client.advance(t, &mut out);
    }
    for (t, e) in out {
        if let ClientEvent::FirstByte { token } = e {
            first_bytes[token as usize] = t;
        }
    }
    let mut attempts = Vec::new();
    client.drain_attempts(&mut attempts);
    attempts.sort_by_key(|a| a.token);
    (first_bytes, attempts.iter().map(|a| a.start_ns).collect())
}

#[test]
fn a_burst_goes_out_two_at_a_time_on_two_threads() {
    let (first, starts) = burst(RequestCpu::new(10 * MS, 2));
    assert_eq!(starts, [10 * MS, 10 * MS, 20 * MS, 20 * MS]);
    assert_eq!(first, [40 * MS, 40 * MS, 50 * MS, 50 * MS]);
}

#[test]
fn without_request_cpu_a_burst_goes_out_at_once() {
    let (first, starts) = burst(RequestCpu::free());
    assert_eq!(starts, [0; 4]);
    assert_eq!(first, [30 * MS; 4]);
}
