//! The classic hold model: N pending events; each pop schedules one new event at
//! `now + Exp(mean)`. Measures engine events per second (pop + schedule pairs) against a bare
//! `BinaryHeap` of `(time, seq, id)` on the same draws (and of `(time << 64 | seq, id)`, the
//! comparison the engine's entry makes), at 1,000 and 100,000 pending events:
//! `push` (an event that cannot be cancelled, as the drivers' local events are) and `schedule`
//! (cancellable, as the store client's timers are).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use engine::{EventQueue, RngStreams, Subsystem};
use rand_distr::{Distribution, Exp};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;

const EVENTS: u64 = 1_000_000;
const MEAN_HOLD_NS: f64 = 1_000_000.0;

/// The hold times, drawn once so that every queue sees the same ones and the draw is not timed.
fn draws(pending: usize) -> Vec<u64> {
    let mut rng = RngStreams::new(1).stream(Subsystem::Named("bench"), 0);
    let exp = Exp::new(1.0 / MEAN_HOLD_NS).expect("positive rate");
    (0..pending as u64 + EVENTS)
        .map(|_| exp.sample(&mut rng) as u64)
        .collect()
}

/// The engine with `push` (`CANCELLABLE = false`) or `schedule`: a const parameter, so that each
/// variant is compiled on its own, as a caller using one of them is.
fn hold_engine<const CANCELLABLE: bool>(draws: &[u64], pending: usize) -> u64 {
    let mut q: EventQueue<u32> = EventQueue::with_capacity(pending);
    let (first, rest) = draws.split_at(pending);
    for (i, &d) in first.iter().enumerate() {
        if CANCELLABLE {
            q.schedule(d, i as u32);
        } else {
            q.push(d, i as u32);
        }
    }
    let mut checksum = 0u64;
    for &d in rest {
        let (now, id) = q.pop().expect("the hold model never empties");
        checksum = checksum.wrapping_add(u64::from(id) ^ now);
        if CANCELLABLE {
            q.schedule(now + d, id);
        } else {
            q.push(now + d, id);
        }
    }
    checksum
}

/// The same model on a bare std BinaryHeap of (time, seq, id), no cancellation: the baseline.
fn hold_std_heap(draws: &[u64], pending: usize) -> u64 {
    let mut q = BinaryHeap::with_capacity(pending);
    let (first, rest) = draws.split_at(pending);
    let mut seq = 0u64;
    for (i, &d) in first.iter().enumerate() {
        q.push(Reverse((d, seq, i as u32)));
        seq += 1;
    }
    let mut checksum = 0u64;
    for &d in rest {
        let Reverse((now, _, id)) = q.pop().expect("never empties");
        checksum = checksum.wrapping_add(u64::from(id) ^ now);
        q.push(Reverse((now + d, seq, id)));
        seq += 1;
    }
    checksum
}

/// The bare heap again, its `(time, seq)` packed into one `u128` field. Not the engine's
/// trick: a `u128` field is 16-byte aligned, so the entry grows from 24 to 32 bytes and this
/// runs slower than the tuple heap (64.6 ms against 47.2 ms at 1,000 pending, 2026-12-06); the
/// engine keeps two `u64` fields and packs them only to compare.
fn hold_std_heap_packed(draws: &[u64], pending: usize) -> u64 {
    let mut q = BinaryHeap::with_capacity(pending);
    let (first, rest) = draws.split_at(pending);
    let key = |t: u64, seq: u64| (u128::from(t) << 64) | u128::from(seq);
    let mut seq = 0u64;
    for (i, &d) in first.iter().enumerate() {
        q.push(Reverse((key(d, seq), i as u32)));
        seq += 1;
    }
    let mut checksum = 0u64;
    for &d in rest {
        let Reverse((k, id)) = q.pop().expect("never empties");
        let now = (k >> 64) as u64;
        checksum = checksum.wrapping_add(u64::from(id) ^ now);
        q.push(Reverse((key(now + d, seq), id)));
        seq += 1;
    }
    checksum
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("hold");
    g.throughput(Throughput::Elements(EVENTS));
    g.sample_size(20);
    for pending in [1_000usize, 100_000] {
        let d = draws(pending);
        assert_eq!(
            hold_engine::<false>(&d, pending),
            hold_std_heap(&d, pending),
            "the engine pops what the bare heap pops"
        );
        assert_eq!(
            hold_engine::<true>(&d, pending),
            hold_std_heap(&d, pending),
            "the cancellable path pops what the bare heap pops"
        );
        assert_eq!(
            hold_std_heap_packed(&d, pending),
            hold_std_heap(&d, pending),
            "packing the key changes no pop"
        );
        g.bench_with_input(BenchmarkId::new("std_binary_heap", pending), &d, |b, d| {
            b.iter(|| black_box(hold_std_heap(d, pending)))
        });
        g.bench_with_input(
            BenchmarkId::new("std_binary_heap_packed_key", pending),
            &d,
            |b, d| b.iter(|| black_box(hold_std_heap_packed(d, pending))),
        );
        g.bench_with_input(BenchmarkId::new("engine_push", pending), &d, |b, d| {
            b.iter(|| black_box(hold_engine::<false>(d, pending)))
        });
        g.bench_with_input(BenchmarkId::new("engine_schedule", pending), &d, |b, d| {
            b.iter(|| black_box(hold_engine::<true>(d, pending)))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
