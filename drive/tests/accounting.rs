//! The parsing threads' time adds up (issue: "accounting that adds up"): for every case, arm
//! and query of every shipped scenario, the reader's integral of decodes, blocked waits and idle
//! threads equals threads x wall time, no more threads are ever held than exist, the blocked
//! waits summed per task equal their integral over time and reach
//! `ParquetFetchWaitTimeMicroseconds`, the driver's decode time equals the busy integral, and
//! the printed parts (`decode_busy`, `decode_fetch_wait`, `decode_inline_read`, `decode_idle`)
//! add up to threads x wall time.

use drive::metric::Metric;
use drive::{run_once, Recording};

mod common;
use common::scenarios;

#[test]
fn parsing_thread_time_adds_up_on_every_shipped_scenario() {
    let mut runs = 0;
    for path in scenarios() {
        let loaded = scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
        let tables = scenario::TableCache::default();
        for (case, overrides) in scenario::cases(&loaded).unwrap() {
            let r = scenario::resolve(&loaded.with_overrides(&overrides).unwrap(), &tables)
                .unwrap_or_else(|e| panic!("{e}"));
            for arm in &r.arms {
                for q in 0..r.queries.len() {
                    let out = run_once(&r, arm, q, &r.queries[q], 0, Recording::default())
                        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    let at = format!("{} / {case} / {} / query {q}", path.display(), arm.name);
                    let t = out.thread_time;
                    let wall = out.metrics.value(Metric::WallTime) as u64;
                    if t.busy_ns == 0 && t.fetch_wait_ns == 0 && t.threads == 0 {
                        continue; // a peer reader: no parsing pool modelled
                    }
                    assert_eq!(t.elapsed_ns, wall, "{at}: the integral covers the run");
                    assert_eq!(t.overcommit_ns, 0, "{at}: more threads held than exist");
                    assert_eq!(
                        t.busy_ns + t.fetch_wait_ns + t.inline_read_ns + t.idle_ns,
                        u64::from(t.threads) * wall,
                        "{at}: busy + fetch wait + inline reads + idle = threads x wall"
                    );
                    assert_eq!(
                        t.fetch_wait_ns, t.fetch_wait_sum_ns,
                        "{at}: per-task waits equal their integral"
                    );
                    let event_ns = out.metrics.value(Metric::DecodeFetchWait);
                    let slack_ns = 1_000.0 * (t.fetch_wait_tasks as f64 + 1.0);
                    assert!(
                        (event_ns - t.fetch_wait_ns as f64).abs() <= slack_ns,
                        "{at}: ParquetFetchWaitTimeMicroseconds {event_ns} ns vs {} ns",
                        t.fetch_wait_ns
                    );
                    // The peak of the summed pools lies between the largest pool's peak and
                    // the sum of every pool's own peak (which it was until 2026-12-07).
                    let pools: Vec<f64> = drive::metric::POOLS
                        .iter()
                        .map(|p| out.metrics.value(Metric::PeakMemoryOf(*p)))
                        .collect();
                    let peak = out.metrics.value(Metric::PeakMemory);
                    let largest = pools.iter().copied().fold(0.0, f64::max);
                    let sum: f64 = pools.iter().sum();
                    assert!(
                        largest <= peak && peak <= sum,
                        "{at}: peak memory {peak} outside [{largest}, {sum}]"
                    );
                    let decode = out.metrics.value(Metric::DecodeBusy);
                    assert_eq!(
                        decode, t.busy_ns as f64,
                        "{at}: the driver's decode time is the reader's busy integral"
                    );
                    let printed: f64 = [
                        Metric::DecodeBusy,
                        Metric::DecodeFetchWait,
                        Metric::DecodeInlineRead,
                        Metric::DecodeIdle,
                    ]
                    .iter()
                    .map(|m| out.metrics.value(*m))
                    .sum();
                    // The fetch wait is printed from a microsecond event: each task's wait
                    // rounds down by under 1 us.
                    let threads_wall = f64::from(t.threads) * wall as f64;
                    assert!(
                        (threads_wall - printed).abs() <= slack_ns,
                        "{at}: the printed parts {printed} ns vs threads x wall {threads_wall} ns"
                    );
                    runs += 1;
                }
            }
        }
    }
    assert!(runs >= 20, "only {runs} runs checked");
}
