//! Cost of one read's whole life through the read-ahead parts (plan, admit, issue, start,
//! progress, complete, serve, release), at 1x, 10x and 100x reads: the per-read cost must stay
//! flat (linear total time), never grow with the queue length.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use readahead::{
    AdmissionContext, ControllerConfig, InFlightController, IoPool, IssueQueue, Memory,
    MemoryClass, MemorySettings, PlannedRead, ProfileEvents, ReadSource, Slot, SubRange,
    TaskReadiness,
};
use std::hint::black_box;

const MIB: u64 = 1 << 20;

/// Plans `reads` reads of 4 MiB up front (as the redesign does at init), then runs them all to
/// completion, 16 at a time, with 1 MiB progress events and two served sub-ranges each.
fn run(reads: u64) -> ProfileEvents {
    let mut events = ProfileEvents::new();
    let mut controller =
        InFlightController::new(ControllerConfig::default()).expect("valid config");
    // Under R7 queued reads do not count against the target: the Compressed pool (0.35 x
    // 4 GiB) is what bounds the reads waiting for an IO thread.
    let mut memory = Memory::new(MemorySettings {
        r4_memory_by_lifetime: true,
        ..MemorySettings::default()
    })
    .expect("valid settings");
    let mut pool = IoPool::new(16).expect("valid pool");
    let mut queue = IssueQueue::new(0);
    for read_id in 0..reads {
        let read = PlannedRead {
            read_id,
            bytes: 4 * MIB,
            class: MemoryClass::CompressedPages,
            row_group: (read_id / 8) as u32,
            subgroup: 0,
        };
        queue.push(read);
    }
    let mut now = 0u64;
    let mut running = std::collections::VecDeque::new();
    while !queue.is_empty() || !running.is_empty() {
        let context = AdmissionContext {
            running_tasks: 0,
            privileged: None,
            demand: false,
        };
        while let Some(issued) = queue
            .poll(now, &context, &mut controller, &mut memory, &mut events)
            .expect("no error")
        {
            let id = issued.read.read_id;
            if pool.submit(id) == Slot::Started {
                controller.on_start(now, id).expect("tracked");
            }
            running.push_back(issued);
        }
        // Complete the oldest running read.
        let Some(issued) = running.pop_front() else {
            continue;
        };
        let id = issued.read.read_id;
        if pool.is_waiting(id) {
            pool.take_waiting(id);
            controller.on_start(now, id).expect("tracked");
        } else if let Some(next) = pool.release() {
            controller.on_start(now, next).expect("tracked");
        }
        let ranges = vec![
            SubRange {
                task_offset: 0,
                len: MIB / 2,
            },
            SubRange {
                task_offset: 3 * MIB,
                len: MIB,
            },
        ];
        let mut readiness = TaskReadiness::new(4 * MIB, ranges, true).expect("valid ranges");
        now += 30_000_000;
        controller.on_first_byte(now, id).expect("tracked");
        for chunk in 1..=4 {
            now += 10_000_000;
            controller
                .on_progress(now, id, chunk * MIB)
                .expect("tracked");
            black_box(readiness.on_progress(chunk * MIB, &mut events));
        }
        controller
            .on_complete(now, id, ReadSource::Store, &mut events)
            .expect("tracked");
        black_box(readiness.on_complete());
        memory.release(issued.charge).expect("own charge");
    }
    events
}

fn lifecycle(c: &mut Criterion) {
    let mut group = c.benchmark_group("read_lifecycle");
    for reads in [1_000u64, 10_000, 100_000] {
        group.throughput(Throughput::Elements(reads));
        group.bench_with_input(BenchmarkId::from_parameter(reads), &reads, |b, &reads| {
            b.iter(|| black_box(run(reads)))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = lifecycle
}
criterion_main!(benches);
