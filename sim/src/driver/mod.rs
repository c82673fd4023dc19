//! The simulation driver: runs one query of one arm, one replication, in virtual time.
//!
//! It owns the clock and the outside world (store, caches, CPU, downstream consumer) and drives
//! the real `planner::Reader` through its public API only, in the order its docs prescribe:
//! drain `poll_action`, jump to the earliest pending event, feed every event of that instant,
//! repeat (see STYLE.md, "a driver loop in this style").

mod io;
pub mod metrics;
pub mod readiness;
mod source;
pub mod timeline;
pub mod trace;

use crate::report::RunMetrics;
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
    let mut consumers = Consumers::new(r);
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
                        consumers.push(chunk);
                    } else if let Some(chunk) = sources.offer(chunk) {
                        local.schedule(now + ns, Local::SourceDone { chunk, busy_ns: ns });
                    }
                }
            }
            consumers.start(r, now, &mut local, consumed);
        }
        // Chunks a source thread handed on since the last action.
        consumers.start(r, now, &mut local, consumed);
        if let Some(e) = reader.error() {
            return Err(RunError::Read(e.to_string()));
        }
        if reader.is_finished() {
            break;
        }
        timeline.sample(now, &reader, io.active_gets());
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
                    consumers.push(chunk);
                }
                Local::Consumed { id, busy_ns } => {
                    consumer_busy_ns += busy_ns;
                    consumers.release();
                    reader.handle(now, Event::ChunkConsumed { id });
                }
            }
        }
        if reader.poll_timeout().is_some_and(|t| t <= now) {
            reader.handle_timeout(now);
        }
    }
    timeline.sample(now, &reader, io.active_gets());

    let store = io.store_stats();
    let figures = metrics::RunFigures {
        wall_ns: now,
        store: metrics::StoreFigures {
            gets: store.gets,
            bytes_fetched: store.bytes_fetched,
            retries: store.retries,
            get_busy_ns: store.mean_concurrency * store.span_ns as f64,
            peak_concurrency: store.peak_concurrency as u64,
            cost_usd: store.cost_usd,
            page_cache_read_through_bytes: io.page_cache_read_through_bytes(),
        },
        decode_busy_ns,
        consumer_busy_ns,
    };
    let metrics = metrics::collect_metrics(&reader, &figures);
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

/// The downstream consumer threads: delivered chunks wait in a queue for a free thread. Both
/// drivers use it, each with its own local-event type.
pub(crate) struct Consumers {
    free: u32,
    queue: VecDeque<planner::Chunk>,
}

impl Consumers {
    pub(crate) fn new(r: &Resolved) -> Consumers {
        Consumers {
            free: r.cpu.consumer_threads().max(1),
            queue: VecDeque::new(),
        }
    }

    pub(crate) fn push(&mut self, chunk: planner::Chunk) {
        self.queue.push_back(chunk);
    }

    /// A consumer thread finished its chunk.
    pub(crate) fn release(&mut self) {
        self.free += 1;
    }

    /// Starts queued chunks while threads are free: each takes the CPU model's time, and
    /// `consumed(chunk, busy_ns)` is scheduled at its end.
    pub(crate) fn start<L>(
        &mut self,
        r: &Resolved,
        now: u64,
        local: &mut EventQueue<L>,
        consumed: impl Fn(planner::ChunkId, u64) -> L,
    ) {
        while self.free > 0 {
            let Some(chunk) = self.queue.pop_front() else {
                break;
            };
            self.free -= 1;
            let ns = r.cpu.consume_ns(chunk.rows, chunk.decoded_bytes);
            local.schedule(now + ns, consumed(chunk.id, ns));
        }
    }
}

fn consumed(id: planner::ChunkId, busy_ns: u64) -> Local {
    Local::Consumed { id, busy_ns }
}
