//! The simulation driver: runs one query of one arm, one replication, in virtual time.
//!
//! It owns the clock and the outside world (store, caches, CPU, downstream consumer) and drives
//! the real `planner::Reader` through its public API only, in the order its docs prescribe:
//! drain `poll_action`, jump to the earliest pending event, feed every event of that instant,
//! repeat (see STYLE.md, "a driver loop in this style").

mod io;
pub mod readiness;
mod source;
pub mod timeline;
pub mod trace;

use crate::report::{RunMetrics, Unit};
use crate::scenario::{Resolved, ResolvedArm, ResolvedQuery};
use engine::EventQueue;
use io::IoWorld;
use planner::{Action, Event, Reader};
use std::collections::VecDeque;
pub use timeline::TimelineRow;
pub use trace::TraceRow;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cannot build the reader: {0}")]
    Plan(String),
    #[error("cannot build the models: {0}")]
    Model(String),
    #[error("the read failed: {0}")]
    Read(String),
    #[error(
        "the simulation stalled at {at}: the reader is not finished but nothing is pending \
         ({reads_running} reads running, {reads_queued} queued); this is a bug in the read path or the driver"
    )]
    Stalled {
        at: String,
        reads_running: u64,
        reads_queued: u64,
    },
}

/// What one run should record besides its metrics.
#[derive(Debug, Clone, Copy, Default)]
pub struct Recording {
    pub trace: bool,
    pub timeline: bool,
}

pub struct RunOutput {
    pub metrics: RunMetrics,
    pub trace: Vec<TraceRow>,
    pub timeline: Vec<TimelineRow>,
}

enum Local {
    DecodeDone { id: planner::DecodeId, busy_ns: u64 },
    SourceDone { chunk: planner::Chunk, busy_ns: u64 },
    Consumed { id: planner::ChunkId, busy_ns: u64 },
}

/// Seeds of one run: common random numbers across arms (the arm is not part of the seed).
pub fn run_seed(root: u64, query_index: usize) -> u64 {
    engine::splitmix64(root ^ engine::splitmix64(query_index as u64 + 1))
}

pub fn run_once(
    r: &Resolved,
    arm: &ResolvedArm,
    query_index: usize,
    query: &ResolvedQuery,
    replication: u32,
    rec: Recording,
) -> Result<RunOutput, RunError> {
    let rngs = engine::RngStreams::new(run_seed(r.seed, query_index));
    let mut reader = Reader::new(r.table.clone(), query.spec.clone(), arm.strategy.clone())
        .map_err(|e| RunError::Plan(e.to_string()))?;
    let mut io = IoWorld::new(r, arm, &rngs, replication as u64, rec.trace)?;
    let mut local: EventQueue<Local> = EventQueue::new();
    let mut consumer_free = r.cpu.consumer_threads().max(1);
    let mut consumer_queue: VecDeque<planner::Chunk> = VecDeque::new();
    let mut sources = source::SourceThreads::default();
    let mut decode_busy_ns: u64 = 0;
    let mut consumer_busy_ns: u64 = 0;
    let mut timeline = timeline::Recorder::new(rec.timeline);
    let mut io_events: Vec<(u64, Event)> = Vec::new();
    let mut now: u64 = 0;

    loop {
        while let Some(action) = reader.poll_action(now, &io.cache_view()) {
            match action {
                Action::Read(req) => io.start(now, req),
                Action::Decode(d) => {
                    let ns = r.cpu.decode_ns(d.compressed_bytes, d.decoded_bytes);
                    local.schedule(
                        now + ns,
                        Local::DecodeDone {
                            id: d.id,
                            busy_ns: ns,
                        },
                    );
                }
                Action::Deliver(chunk) => {
                    let ns = r.cpu.source_ns(chunk.rows);
                    if ns == 0 {
                        consumer_queue.push_back(chunk);
                    } else if let Some(chunk) = sources.offer(chunk) {
                        local.schedule(now + ns, Local::SourceDone { chunk, busy_ns: ns });
                    }
                }
            }
            start_consumers(r, now, &mut consumer_free, &mut consumer_queue, &mut local);
        }
        // Chunks a source thread handed on since the last action.
        start_consumers(r, now, &mut consumer_free, &mut consumer_queue, &mut local);
        if let Some(e) = reader.error() {
            return Err(RunError::Read(e.to_string()));
        }
        if reader.is_finished() {
            break;
        }
        timeline.sample(now, &reader, &io);
        let next = [local.peek_time(), io.next_event_ns(), reader.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        let Some(next) = next else {
            let s = reader.status();
            return Err(RunError::Stalled {
                at: units::format_duration_ns(now),
                reads_running: s.reads_running as u64,
                reads_queued: s.reads_queued as u64,
            });
        };
        now = next.max(now);
        io.advance(now, &mut io_events);
        for (t, ev) in io_events.drain(..) {
            reader.handle(t.max(now), ev);
        }
        while local.peek_time() == Some(now) {
            let Some((_, ev)) = local.pop() else { break };
            match ev {
                Local::DecodeDone { id, busy_ns } => {
                    decode_busy_ns += busy_ns;
                    reader.handle(now, Event::DecodeCompleted { id });
                }
                Local::SourceDone { chunk, busy_ns } => {
                    consumer_busy_ns += busy_ns;
                    if let Some(next) = sources.done(chunk.source) {
                        let ns = r.cpu.source_ns(next.rows);
                        local.schedule(
                            now + ns,
                            Local::SourceDone {
                                chunk: next,
                                busy_ns: ns,
                            },
                        );
                    }
                    consumer_queue.push_back(chunk);
                }
                Local::Consumed { id, busy_ns } => {
                    consumer_busy_ns += busy_ns;
                    consumer_free += 1;
                    reader.handle(now, Event::ChunkConsumed { id });
                }
            }
        }
        if reader.poll_timeout().is_some_and(|t| t <= now) {
            reader.handle_timeout(now);
        }
    }
    timeline.sample(now, &reader, &io);

    let metrics = collect_metrics(now, &reader, &io, decode_busy_ns, consumer_busy_ns);
    let trace = if rec.trace {
        // Requests, then the ranges the reader needed (what `sim replay --what-if` re-plans).
        let mut t = io.take_trace();
        t.extend(trace::needed_rows(&r.table, &query.spec, &arm.strategy));
        t
    } else {
        Vec::new()
    };
    Ok(RunOutput {
        metrics,
        trace,
        timeline: timeline.rows,
    })
}

/// Starts consumer work on queued chunks while consumer threads are free.
fn start_consumers(
    r: &Resolved,
    now: u64,
    free: &mut u32,
    queue: &mut VecDeque<planner::Chunk>,
    local: &mut EventQueue<Local>,
) {
    while *free > 0 {
        let Some(chunk) = queue.pop_front() else {
            break;
        };
        *free -= 1;
        let ns = r.cpu.consume_ns(chunk.rows, chunk.decoded_bytes);
        local.schedule(
            now + ns,
            Local::Consumed {
                id: chunk.id,
                busy_ns: ns,
            },
        );
    }
}

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

fn collect_metrics(
    wall_ns: u64,
    reader: &Reader,
    io: &IoWorld,
    decode_busy_ns: u64,
    consumer_busy_ns: u64,
) -> RunMetrics {
    let pe = reader.profile_events();
    let status = reader.status();
    let store = io.store_stats();
    let mut m = RunMetrics::default();
    let task_bytes = pe.parquet_read_task_bytes as f64;
    let needed = reader.output().needed_bytes as f64;
    let store_bytes = store.bytes_fetched as f64;
    m.push("wall_time", Unit::Nanoseconds, wall_ns as f64);
    m.push("gets", Unit::Count, store.gets as f64);
    m.push("read_tasks", Unit::Count, pe.parquet_read_tasks as f64);
    m.push("needed_bytes", Unit::Bytes, needed);
    m.push("task_bytes", Unit::Bytes, task_bytes);
    m.push("store_bytes", Unit::Bytes, store_bytes);
    m.push(
        "amplification_store_over_task",
        Unit::Ratio,
        if task_bytes > 0.0 {
            store_bytes / task_bytes
        } else {
            0.0
        },
    );
    m.push(
        "amplification_task_over_needed",
        Unit::Ratio,
        if needed > 0.0 {
            task_bytes / needed
        } else {
            0.0
        },
    );
    let wall = wall_ns.max(1) as f64;
    let get_busy_ns = store.mean_concurrency * store.span_ns as f64;
    m.push("get_busy_time", Unit::Nanoseconds, get_busy_ns);
    m.push("mean_concurrent_gets", Unit::Count, get_busy_ns / wall);
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
    m.push("decode_busy", Unit::Nanoseconds, decode_busy_ns as f64);
    m.push(
        "decode_fetch_wait",
        Unit::Nanoseconds,
        pe.parquet_fetch_wait_time_microseconds as f64 * 1e3,
    );
    m.push("consumer_busy", Unit::Nanoseconds, consumer_busy_ns as f64);
    m.push(
        "cpu_use",
        Unit::Cores,
        (decode_busy_ns + consumer_busy_ns) as f64 / wall,
    );
    m.push("cost", Unit::Dollars, store.cost_usd);
    m.push("rows", Unit::Count, reader.output().rows as f64);
    m.push("store_retries", Unit::Count, store.retries as f64);
    for (name, value) in pe.iter() {
        let value = if name == "ReadBufferFromS3Bytes" {
            store.bytes_fetched
        } else {
            value
        };
        let value = if name == "PageCacheReadThroughBytes" {
            value + io.page_cache_read_through_bytes()
        } else {
            value
        };
        m.push(name, Unit::Count, value as f64);
    }
    m
}
