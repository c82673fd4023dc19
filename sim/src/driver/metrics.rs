//! The metrics of one run, under the names, units and order every report, `--json`, `--csv`
//! and comparison reads. Both drivers call [`collect_metrics`]: the simulated one fills
//! [`StoreFigures`] from the store model's client, the real one (`sim measure`) from its log of
//! real requests. The reader-side figures come from the same `planner::Reader` in both.

use crate::report::{RunMetrics, Unit};
use planner::Reader;

/// The reader's memory budgets: the base generation's five stages, then the redesign's pools.
pub(crate) const MEMORY_POOLS: [&str; 8] = [
    "BloomFilterHeader",
    "BloomFilterBlocksOrDictionary",
    "ColumnIndexAndOffsetIndex",
    "OffsetIndex",
    "ColumnData",
    "Metadata",
    "Compressed",
    "Decoded",
];

/// What the store side of a run did, whichever driver ran it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoreFigures {
    /// HTTP GETs sent, retries included (ClickHouse `S3GetObject`).
    pub gets: u64,
    /// Body bytes received (ClickHouse `ReadBufferFromS3Bytes`).
    pub bytes_fetched: u64,
    /// Attempts after the first of their read.
    pub retries: u64,
    /// The integral of GETs in flight over time.
    pub get_busy_ns: f64,
    /// Most attempts in flight at once.
    pub peak_concurrency: u64,
    /// Requests plus bytes, at the scenario's store prices.
    pub cost_usd: f64,
    /// Bytes the page cache read through from the filesystem (0 without a page cache).
    pub page_cache_read_through_bytes: u64,
}

/// Everything of one run besides the reader.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFigures {
    pub wall_ns: u64,
    pub store: StoreFigures,
    pub decode_busy_ns: u64,
    pub consumer_busy_ns: u64,
}

/// The run's metrics.
pub fn collect_metrics(reader: &Reader, f: &RunFigures) -> RunMetrics {
    let pe = reader.profile_events();
    let status = reader.status();
    let store = &f.store;
    let mut m = RunMetrics::default();
    let task_bytes = pe.parquet_read_task_bytes as f64;
    let needed = reader.output().needed_bytes as f64;
    let store_bytes = store.bytes_fetched as f64;
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    m.push("wall_time", Unit::Nanoseconds, f.wall_ns as f64);
    m.push("gets", Unit::Count, store.gets as f64);
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
    m.push("get_busy_time", Unit::Nanoseconds, store.get_busy_ns);
    m.push(
        "mean_concurrent_gets",
        Unit::Count,
        store.get_busy_ns / wall,
    );
    m.push(
        "max_concurrent_gets",
        Unit::Count,
        store.peak_concurrency as f64,
    );
    // Every pool of both generations, in a fixed order, so arms line up (absent = 0). The total
    // adds per-pool peaks: an upper bound of the peak of the sum.
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
    m.push("cost", Unit::Dollars, store.cost_usd);
    m.push("rows", Unit::Count, reader.output().rows as f64);
    m.push("store_retries", Unit::Count, store.retries as f64);
    for (name, value) in pe.iter() {
        // The store's bytes are counted by the driver; the page cache's read-through by the IO
        // world (the reader sees neither).
        let value = match name {
            "ReadBufferFromS3Bytes" => store.bytes_fetched,
            "PageCacheReadThroughBytes" => value + store.page_cache_read_through_bytes,
            _ => value,
        };
        m.push(name, Unit::Count, value as f64);
    }
    m
}
