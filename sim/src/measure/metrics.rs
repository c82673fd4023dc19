//! The metrics of one real run, under the same names, units and order as a simulated run's
//! (`driver::collect_metrics`), so the report, `--json`, `--csv` and the comparison read both
//! alike. The reader-side figures come from the same `planner::Reader`; the store-side ones
//! from the driver's own log of real requests.
//!
//! This mirrors `driver::collect_metrics`, which takes the simulated IO world and cannot be
//! called here; a test (`tests/measure_inmemory.rs`) checks that the names stay identical.

use super::counters::RequestStats;
use crate::driver::MEMORY_POOLS;
use crate::report::{RunMetrics, Unit};
use planner::Reader;

/// Everything of one run besides the reader.
pub struct RunFigures {
    pub wall_ns: u64,
    pub store: RequestStats,
    pub decode_busy_ns: u64,
    pub consumer_busy_ns: u64,
}

/// The run's metrics, in `sim run`'s order.
pub fn collect(reader: &Reader, f: &RunFigures) -> RunMetrics {
    let pe = reader.profile_events();
    let status = reader.status();
    let mut m = RunMetrics::default();
    let task_bytes = pe.parquet_read_task_bytes as f64;
    let needed = reader.output().needed_bytes as f64;
    let store_bytes = f.store.bytes_fetched as f64;
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    m.push("wall_time", Unit::Nanoseconds, f.wall_ns as f64);
    m.push("gets", Unit::Count, f.store.gets as f64);
    m.push("read_tasks", Unit::Count, pe.parquet_read_tasks as f64);
    m.push("needed_bytes", Unit::Bytes, needed);
    m.push("task_bytes", Unit::Bytes, task_bytes);
    m.push("store_bytes", Unit::Bytes, store_bytes);
    m.push(
        "amplification_store_over_task",
        Unit::Ratio,
        ratio(store_bytes, task_bytes),
    );
    m.push(
        "amplification_task_over_needed",
        Unit::Ratio,
        ratio(task_bytes, needed),
    );
    let wall = f.wall_ns.max(1) as f64;
    let busy = f.store.get_busy_ns as f64;
    m.push("get_busy_time", Unit::Nanoseconds, busy);
    m.push("mean_concurrent_gets", Unit::Count, busy / wall);
    m.push(
        "max_concurrent_gets",
        Unit::Count,
        f.store.peak_concurrency as f64,
    );
    let peaks = status.peak_memory();
    let peak_of = |pool: &str| {
        peaks
            .iter()
            .find(|(n, _)| n == pool)
            .map(|p| p.1)
            .unwrap_or(0)
    };
    m.push(
        "peak_memory",
        Unit::Bytes,
        MEMORY_POOLS.iter().map(|p| peak_of(p)).sum::<u64>() as f64,
    );
    for pool in MEMORY_POOLS {
        m.push(
            format!("peak_memory_{pool}"),
            Unit::Bytes,
            peak_of(pool) as f64,
        );
    }
    m.push("decode_busy", Unit::Nanoseconds, f.decode_busy_ns as f64);
    m.push(
        "decode_fetch_wait",
        Unit::Nanoseconds,
        pe.parquet_fetch_wait_time_microseconds as f64 * 1e3,
    );
    m.push(
        "consumer_busy",
        Unit::Nanoseconds,
        f.consumer_busy_ns as f64,
    );
    m.push(
        "cpu_use",
        Unit::Cores,
        (f.decode_busy_ns + f.consumer_busy_ns) as f64 / wall,
    );
    m.push("cost", Unit::Dollars, f.store.cost_usd);
    m.push("rows", Unit::Count, reader.output().rows as f64);
    m.push("store_retries", Unit::Count, f.store.retries as f64);
    for (name, value) in pe.iter() {
        // The driver counts the store's bytes; there is no page cache to read through.
        let value = if name == "ReadBufferFromS3Bytes" {
            f.store.bytes_fetched
        } else {
            value
        };
        m.push(name, Unit::Count, value as f64);
    }
    m
}
