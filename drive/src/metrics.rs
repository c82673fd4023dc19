//! The metrics of one run, from the reader and the world's store figures. Both worlds end in
//! [`collect_metrics`]: the simulated one fills [`StoreFigures`] from the store model's client,
//! the real one from its log of real requests. The reader-side figures come from the same
//! `planner::Reader` in both.

use crate::metric::{Metric, RunMetrics, POOLS};
use planner::Reader;
use readahead::ProfileEvent;

/// What the store side of a run did, whichever world ran it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoreFigures {
    /// HTTP GETs sent, retries included (ClickHouse `S3GetObject`).
    pub gets: u64,
    /// HEADs sent.
    pub heads: u64,
    /// LISTs sent.
    pub lists: u64,
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
    /// The dependent round trips among the requests that went to the store (the bound's chain).
    pub round_trips: crate::bound::StoreRoundTrips,
    /// Whose store figures the bound takes: the model's, or a measurement's.
    pub floor: crate::bound::StoreFloor,
}

/// Everything of one run besides the reader.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunFigures {
    pub wall_ns: u64,
    /// [`crate::bound::lower_bound`] of the run.
    pub lower_bound_ns: u64,
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
    m.set(Metric::WallTime, f.wall_ns as f64);
    m.set(Metric::LowerBound, f.lower_bound_ns as f64);
    m.set(
        Metric::Efficiency,
        if f.wall_ns == 0 {
            1.0
        } else {
            f.lower_bound_ns as f64 / f.wall_ns as f64
        },
    );
    m.set(Metric::Gets, store.gets as f64);
    m.set(Metric::Heads, store.heads as f64);
    m.set(Metric::Lists, store.lists as f64);
    m.set(Metric::ReadTasks, pe.parquet_read_tasks as f64);
    m.set(Metric::NeededBytes, reader.output().needed_bytes as f64);
    m.set(Metric::TaskBytes, pe.parquet_read_task_bytes as f64);
    m.set(Metric::StoreBytes, store.bytes_fetched as f64);
    m.set(Metric::GetBusyTime, store.get_busy_ns);
    m.set(Metric::MaxConcurrentGets, store.peak_concurrency as f64);
    // Every pool of both generations, in a fixed order, so arms line up (absent = 0). The total
    // is the peak of the pools' summed usage (the sum of per-pool peaks, its upper bound, was
    // shown until 2026-12-07 and fed `--max-memory`).
    let peak_of = |pool: readahead::Budget| {
        status
            .memory
            .iter()
            .find(|u| u.budget == pool)
            .map_or(0, |u| u.peak_bytes)
    };
    m.set(Metric::PeakMemory, status.peak_memory_bytes as f64);
    for pool in POOLS {
        m.set(Metric::PeakMemoryOf(pool), peak_of(pool) as f64);
    }
    m.set(Metric::DecodeBusy, f.decode_busy_ns as f64);
    m.set(
        Metric::DecodeFetchWait,
        pe.parquet_fetch_wait_time_microseconds as f64 * 1e3,
    );
    let threads = reader.thread_time();
    m.set(Metric::DecodeInlineRead, threads.inline_read_ns as f64);
    m.set(Metric::DecodeIdle, threads.idle_ns as f64);
    m.set(Metric::ConsumerBusy, f.consumer_busy_ns as f64);
    m.set(Metric::Cost, store.cost_usd);
    m.set(Metric::Rows, reader.output().rows as f64);
    m.set(Metric::StoreRetries, store.retries as f64);
    for (name, value) in pe.iter() {
        let Some(event) = ProfileEvent::from_name(name) else {
            continue;
        };
        // The store's bytes are counted by the world; the page cache's read-through by the
        // simulated world (the reader sees neither).
        let value = match event {
            ProfileEvent::ReadBufferFromS3Bytes => store.bytes_fetched,
            ProfileEvent::PageCacheReadThroughBytes => value + store.page_cache_read_through_bytes,
            _ => value,
        };
        m.set(Metric::Event(event), value as f64);
    }
    m.recompute_ratios();
    m
}
