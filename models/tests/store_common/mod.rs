//! A small closed-loop driver for the store tests: keeps `in_flight` reads outstanding until
//! all reads are done, recording every event.
#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use engine::{RngStreams, Subsystem};
use models::store::{Attempt, ClientEvent, GetRequest, S3Client, StoreSpec, StoreStats};
use std::collections::BTreeMap;

pub const MIB: u64 = 1 << 20;

/// What a run produced.
pub struct Run {
    pub events: Vec<(u64, ClientEvent)>,
    pub start_ns: BTreeMap<u64, u64>,
    pub first_byte_ns: BTreeMap<u64, u64>,
    pub done_ns: BTreeMap<u64, u64>,
    pub failed: BTreeMap<u64, String>,
    pub lens: BTreeMap<u64, u64>,
    pub end_ns: u64,
    pub stats: StoreStats,
    pub attempts: Vec<Attempt>,
    pub max_nic_rate: f64,
}

impl Run {
    /// Total time (first byte sent to last byte) of each completed read, ms.
    pub fn latencies_ms(&self) -> Vec<f64> {
        self.done_ns
            .iter()
            .map(|(t, d)| (d - self.start_ns[t]) as f64 / 1e6)
            .collect()
    }
    /// First-byte latency of each read, ms.
    pub fn first_byte_ms(&self) -> Vec<f64> {
        self.first_byte_ns
            .iter()
            .map(|(t, f)| (f - self.start_ns[t]) as f64 / 1e6)
            .collect()
    }
}

/// The q-quantile (nearest rank) of `v`.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// Runs `reads` (length, prefix) with at most `in_flight` outstanding.
pub fn closed_loop(spec: &StoreSpec, seed: u64, in_flight: usize, reads: &[(u64, u32)]) -> Run {
    let rng = RngStreams::new(seed).stream(Subsystem::Store, 0);
    let mut client = S3Client::new(spec, rng).expect("valid spec");
    client.set_trace(true);
    let mut run = Run {
        events: Vec::new(),
        start_ns: BTreeMap::new(),
        first_byte_ns: BTreeMap::new(),
        done_ns: BTreeMap::new(),
        failed: BTreeMap::new(),
        lens: BTreeMap::new(),
        end_ns: 0,
        stats: StoreStats::default(),
        attempts: Vec::new(),
        max_nic_rate: 0.0,
    };
    let mut next = 0usize;
    let start = |client: &mut S3Client, run: &mut Run, now: u64, next: &mut usize| {
        if let Some(&(len, prefix)) = reads.get(*next) {
            let token = *next as u64;
            client
                .start(
                    now,
                    GetRequest {
                        method: Default::default(),
                        token,
                        object: token,
                        prefix,
                        offset: 0,
                        len,
                    },
                )
                .expect("fresh token");
            run.start_ns.insert(token, now);
            run.lens.insert(token, len);
            *next += 1;
        }
    };
    for _ in 0..in_flight {
        start(&mut client, &mut run, 0, &mut next);
    }
    let mut buf = Vec::new();
    while let Some(t) = client.next_event_ns() {
        buf.clear();
        client.advance(t, &mut buf);
        run.max_nic_rate = run.max_nic_rate.max(client.nic_rate_bytes_per_s());
        for (at, e) in buf.drain(..) {
            assert!(at <= t && at >= run.end_ns, "events in time order");
            run.end_ns = at;
            match &e {
                ClientEvent::FirstByte { token } => {
                    assert!(
                        run.first_byte_ns.insert(*token, at).is_none(),
                        "one first byte per read"
                    );
                }
                ClientEvent::Completed { token } => {
                    assert!(
                        run.done_ns.insert(*token, at).is_none(),
                        "one completion per read"
                    );
                    start(&mut client, &mut run, at, &mut next);
                }
                ClientEvent::Failed { token, reason } => {
                    run.failed.insert(*token, reason.clone());
                    start(&mut client, &mut run, at, &mut next);
                }
                ClientEvent::Progress { .. } => {}
            }
            run.events.push((at, e));
        }
    }
    run.stats = client.stats();
    client.drain_attempts(&mut run.attempts);
    run
}
