//! The classic hold model: N pending events; each pop schedules one new event at
//! `now + Exp(mean)`. Measures engine events per second (pop + schedule pairs).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use engine::{EventQueue, RngStreams, Subsystem};
use rand_distr::{Distribution, Exp};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;

const PENDING: usize = 1_000;
const EVENTS: u64 = 1_000_000;
const MEAN_HOLD_NS: f64 = 1_000_000.0;

fn hold_engine() -> u64 {
    let mut rng = RngStreams::new(1).stream(Subsystem::Named("bench"), 0);
    let exp = Exp::new(1.0 / MEAN_HOLD_NS).expect("positive rate");
    let mut q: EventQueue<u32> = EventQueue::with_capacity(PENDING);
    for i in 0..PENDING {
        q.schedule(exp.sample(&mut rng) as u64, i as u32);
    }
    let mut checksum = 0u64;
    for _ in 0..EVENTS {
        let (now, id) = q.pop().expect("the hold model never empties");
        checksum = checksum.wrapping_add(id as u64);
        q.schedule(now + exp.sample(&mut rng) as u64, id);
    }
    checksum
}

/// The same model on a bare std BinaryHeap of (time, seq, id), no cancellation: the baseline.
fn hold_std_heap() -> u64 {
    let mut rng = RngStreams::new(1).stream(Subsystem::Named("bench"), 0);
    let exp = Exp::new(1.0 / MEAN_HOLD_NS).expect("positive rate");
    let mut q = BinaryHeap::with_capacity(PENDING);
    let mut seq = 0u64;
    for i in 0..PENDING {
        q.push(Reverse((exp.sample(&mut rng) as u64, seq, i as u32)));
        seq += 1;
    }
    let mut checksum = 0u64;
    for _ in 0..EVENTS {
        let Reverse((now, _, id)) = q.pop().expect("never empties");
        checksum = checksum.wrapping_add(id as u64);
        q.push(Reverse((now + exp.sample(&mut rng) as u64, seq, id)));
        seq += 1;
    }
    checksum
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("hold");
    g.throughput(Throughput::Elements(EVENTS));
    g.sample_size(20);
    g.bench_function("engine_event_queue_1000_pending", |b| {
        b.iter(|| black_box(hold_engine()))
    });
    g.bench_function("std_binary_heap_1000_pending", |b| {
        b.iter(|| black_box(hold_std_heap()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
