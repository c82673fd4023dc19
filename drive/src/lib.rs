//! The simulation driver: runs one query of one arm, one replication, in virtual time.
//!
//! It owns the clock and the outside world (store, caches, CPU, downstream consumer) and drives
//! the real `planner::Reader` through its public API only, in the order its docs prescribe:
//! drain `poll_action`, jump to the earliest pending event, feed every event of that instant,
//! repeat (see `docs/style.md`, "A driver loop in this style").

mod io;
pub mod metric;
pub mod metrics;
pub mod readiness;
mod sim_world;
mod source;
pub mod timeline;
pub mod trace;
pub mod world;

use crate::metric::RunMetrics;
use engine::EventQueue;
use scenario::{Resolved, ResolvedArm, ResolvedQuery};
pub mod bound;
use planner::{Action, Event, Reader};
pub use sim_world::SimWorld;
use std::collections::VecDeque;
pub use timeline::TimelineRow;
pub use trace::TraceRow;
pub use world::{Runner, Simulated, World};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cannot build the reader: {0}")]
    Plan(String),
    #[error("cannot build the models: {0}")]
    Model(String),
    #[error("the read failed: {0}")]
    Read(String),
    /// The world cannot honour a scenario feature: `key` names it, `why` says what to change.
    #[error("the {world} world cannot honour `{key}`: {why}")]
    Unsupported {
        world: &'static str,
        key: String,
        why: String,
    },
    /// The world could not be set up for a case.
    #[error("{0}")]
    Setup(String),
    #[error(
        "the simulation stalled at {at}: the reader is not finished but nothing is pending \
         ({reads_running} reads running, {reads_queued} queued); this is a bug in the read path or the driver"
    )]
    Stalled {
        at: String,
        reads_running: u64,
        reads_queued: u64,
    },
    #[error(
        "the simulated run would pass {bound} of virtual time (limits::MAX_VIRTUAL_TIME_NS) at \
         {at}: a CPU, store or cache cost in the scenario is far too large (hours a task?)"
    )]
    TooLong { at: String, bound: String },
}

/// A run that failed, and the trace rows of the requests it had completed before (empty unless
/// the run was traced, and for a world that keeps none).
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct RunFailure {
    pub error: RunError,
    pub trace: Vec<TraceRow>,
}

impl From<RunError> for RunFailure {
    fn from(error: RunError) -> Self {
        RunFailure {
            error,
            trace: Vec::new(),
        }
    }
}

/// What one run should record besides its metrics.
#[derive(Debug, Clone, Copy, Default)]
pub struct Recording {
    pub trace: bool,
    pub timeline: bool,
}

pub struct RunOutput {
    pub metrics: RunMetrics,
    /// How the reader's parsing threads spent the run.
    pub thread_time: planner::ThreadTime,
    pub trace: Vec<TraceRow>,
    pub timeline: Vec<TimelineRow>,
}

enum Local {
    DecodeDone { id: planner::DecodeId, busy_ns: u64 },
    SourceDone { chunk: planner::Chunk, busy_ns: u64 },
    Consumed { id: planner::ChunkId, busy_ns: u64 },
}

/// The earlier of two times, either of which may be absent. Asked on every turn of the loop
/// (an array of options flattened and folded cost more than the comparison).
#[inline]
pub(crate) fn earliest(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Seeds of one run: common random numbers across arms (the arm is not part of the seed).
pub fn run_seed(root: u64, query_index: usize) -> u64 {
    engine::splitmix64(root ^ engine::splitmix64(query_index as u64 + 1))
}

/// One query of one arm, one replication, in the simulated world.
pub fn run_once(
    r: &Resolved,
    arm: &ResolvedArm,
    query_index: usize,
    query: &ResolvedQuery,
    replication: u32,
    rec: Recording,
) -> Result<RunOutput, RunError> {
    let mut world = SimWorld::new(r, arm, query_index, replication, rec.trace)?;
    let out = run_in(&mut world, r, arm, query, rec)?;
    // The bound is the model's own: a simulated run cannot beat it (a real one is not held to
    // the model's NIC and first byte).
    debug_assert!(
        out.metrics.value(metric::Metric::LowerBound)
            <= out.metrics.value(metric::Metric::WallTime),
        "a simulated run beat its lower bound: {} ns under {} ns",
        out.metrics.value(metric::Metric::WallTime),
        out.metrics.value(metric::Metric::LowerBound)
    );
    Ok(out)
}

/// The driver loop: one query of one arm in `world`, through the reader's public API only, in
/// the order its contract prescribes (drain `poll_action`, wait for the next event, feed every
/// event of that instant, repeat). The CPU stand-ins (decode threads, source threads, the
/// downstream consumers) are the loop's own, so every world runs them alike.
pub fn run_in<W: World>(
    world: &mut W,
    r: &Resolved,
    arm: &ResolvedArm,
    query: &ResolvedQuery,
    rec: Recording,
) -> Result<RunOutput, RunError> {
    let mut reader = Reader::new(r.table.clone(), query.spec.clone(), arm.strategy.clone())
        .map_err(|e| RunError::Plan(e.to_string()))?;
    reader.record_needed(rec.trace);
    reader.share_plans(r.plans.clone());
    let mut cpu = CpuStandIns::new(r);
    let mut timeline = timeline::Recorder::new(rec.timeline);
    let mut batch: Vec<(u64, Event)> = Vec::new();
    let mut now: u64 = 0;

    loop {
        now = world.now(now);
        // A quiescent reader would answer `None` (nothing reached it, as at a CPU stand-in's
        // instant, or only what changes nothing a pump reads, as a first byte): not asked.
        if !reader.is_quiescent() {
            while let Some(action) = reader.poll_action(now, world.cache_view()) {
                match action {
                    Action::Read(req) => world.start_read(now, req)?,
                    Action::Decode(d) => cpu.decode(r, now, &d),
                    Action::Deliver(chunk) => cpu.deliver(r, now, chunk),
                }
                cpu.start_consumers(r, now);
            }
        } else if cfg!(debug_assertions) {
            // Debug builds ask anyway: the answer must be `None` (its clock step only adds to
            // the reader's time accounts, which add up the same in one step or several).
            let skipped = reader.poll_action(now, world.cache_view());
            assert!(
                skipped.is_none(),
                "a quiescent reader acted at {now} ns: {skipped:?}"
            );
        }
        // Chunks a source thread handed on since the last action.
        cpu.start_consumers(r, now);
        if let Some(e) = reader.error() {
            return Err(RunError::Read(e.to_string()));
        }
        if reader.is_finished() {
            break;
        }
        timeline.sample(now, &reader, world.reads_open());
        let timeout = reader.poll_timeout();
        let next = match cpu.next_time() {
            // Only a stand-in has something due by then: the world is not advanced to it.
            Some(t) if timeout.is_none_or(|p| p > t) && world.quiet_through(t) => t,
            cpu_next => {
                let Some(next) = world.wait(now, earliest(cpu_next, timeout), &mut batch)? else {
                    let s = reader.status();
                    return Err(RunError::Stalled {
                        at: units::format_duration_ns(now),
                        reads_running: s.reads_running,
                        reads_queued: s.reads_queued,
                    });
                };
                next
            }
        };
        if next > limits::MAX_VIRTUAL_TIME_NS {
            return Err(RunError::TooLong {
                at: units::format_duration_ns(now),
                bound: units::format_duration_ns(limits::MAX_VIRTUAL_TIME_NS),
            });
        }
        // The world's events, then every stand-in that is due, fed in time order (a real
        // world's stamps may trail a time the reader has already seen).
        cpu.due(r, next, &mut batch);
        batch.sort_by_key(|(t, _)| *t);
        for (t, ev) in batch.drain(..) {
            now = t.max(now);
            reader.handle(now, ev);
        }
        now = now.max(next);
        if reader.poll_timeout().is_some_and(|t| t <= now) {
            reader.handle_timeout(now);
        }
    }
    timeline.sample(now, &reader, world.reads_open());

    let store = world.store_figures(now);
    let work = bound::RunWork {
        needed_bytes: reader.output().needed_bytes,
        fetched_bytes: store.bytes_fetched,
        decode_busy_ns: cpu.decode_busy_ns,
        peak_decodes: cpu.peak_decodes,
    };
    let bound = bound::lower_bound(r, &work, &store.round_trips, store.floor);
    let figures = metrics::RunFigures {
        lower_bound_ns: bound.ns(),
        wall_ns: now,
        store,
        decode_busy_ns: cpu.decode_busy_ns,
        consumer_busy_ns: cpu.consumer_busy_ns,
    };
    let metrics = metrics::collect_metrics(&reader, &figures);
    let trace = if rec.trace {
        // Requests, then the ranges the reader needed (what `sim replay --what-if` re-plans).
        let mut t = world.take_trace();
        let needed = reader
            .take_needed()
            .map_err(|e| RunError::Plan(e.to_string()))?;
        t.extend(trace::needed_rows(&r.table, &needed));
        t
    } else {
        Vec::new()
    };
    Ok(RunOutput {
        thread_time: reader.thread_time(),
        metrics,
        trace,
        timeline: timeline.rows,
    })
}

/// The CPU side of a run, which the loop simulates in every world: decode threads (the reader
/// reserves them; each decode takes the CPU model's time), the per-source threads that hand
/// chunks on one at a time (`docs/findings.md` F7), and the downstream consumer threads.
struct CpuStandIns {
    local: EventQueue<Local>,
    consumers: Consumers,
    sources: source::SourceThreads,
    decode_busy_ns: u64,
    consumer_busy_ns: u64,
    /// Decodes running now, and the most at once (the lower bound's decode parallelism).
    decodes_running: u32,
    peak_decodes: u32,
}

impl CpuStandIns {
    fn new(r: &Resolved) -> Self {
        CpuStandIns {
            local: EventQueue::new(),
            consumers: Consumers::new(r),
            sources: source::SourceThreads::default(),
            decode_busy_ns: 0,
            consumer_busy_ns: 0,
            decodes_running: 0,
            peak_decodes: 0,
        }
    }

    fn next_time(&self) -> Option<u64> {
        self.local.peek_time()
    }

    fn decode(&mut self, r: &Resolved, now: u64, d: &planner::DecodeRequest) {
        let ns = r.cpu.decode_ns(d.compressed_bytes, d.decoded_bytes);
        self.decodes_running += 1;
        self.peak_decodes = self.peak_decodes.max(self.decodes_running);
        // Saturating: a time past `MAX_VIRTUAL_TIME_NS` ends the run with an error, not a wrap.
        self.local.push(
            now.saturating_add(ns),
            Local::DecodeDone {
                id: d.id,
                busy_ns: ns,
            },
        );
    }

    fn deliver(&mut self, r: &Resolved, now: u64, chunk: planner::Chunk) {
        let ns = r.cpu.source_ns(chunk.rows);
        if ns == 0 {
            self.consumers.push(chunk);
        } else if let Some(chunk) = self.sources.offer(chunk) {
            self.local.push(
                now.saturating_add(ns),
                Local::SourceDone { chunk, busy_ns: ns },
            );
        }
    }

    fn start_consumers(&mut self, r: &Resolved, now: u64) {
        self.consumers
            .start(r, now, &mut self.local, |id, busy_ns| Local::Consumed {
                id,
                busy_ns,
            });
    }

    /// Every stand-in finishing at or before `now`, as reader events in `out`.
    fn due(&mut self, r: &Resolved, now: u64, out: &mut Vec<(u64, Event)>) {
        while self.local.peek_time().is_some_and(|t| t <= now) {
            let Some((t, ev)) = self.local.pop() else {
                break;
            };
            match ev {
                Local::DecodeDone { id, busy_ns } => {
                    debug_assert!(
                        self.decodes_running > 0,
                        "a decode ended that was not running"
                    );
                    self.decodes_running -= 1;
                    self.decode_busy_ns = self.decode_busy_ns.saturating_add(busy_ns);
                    out.push((t, Event::DecodeCompleted { id }));
                }
                Local::SourceDone { chunk, busy_ns } => {
                    self.consumer_busy_ns = self.consumer_busy_ns.saturating_add(busy_ns);
                    if let Some(next) = self.sources.done(chunk.source) {
                        let ns = r.cpu.source_ns(next.rows);
                        self.local.push(
                            t.saturating_add(ns),
                            Local::SourceDone {
                                chunk: next,
                                busy_ns: ns,
                            },
                        );
                    }
                    self.consumers.push(chunk);
                }
                Local::Consumed { id, busy_ns } => {
                    self.consumer_busy_ns = self.consumer_busy_ns.saturating_add(busy_ns);
                    self.consumers.release();
                    out.push((t, Event::ChunkConsumed { id }));
                }
            }
        }
    }
}

/// The downstream consumer threads: delivered chunks wait in a queue for a free thread. Both
/// drivers use it, each with its own local-event type.
pub struct Consumers {
    free: u32,
    queue: VecDeque<planner::Chunk>,
}

impl Consumers {
    pub fn new(r: &Resolved) -> Consumers {
        Consumers {
            free: r.cpu.consumer_threads().max(1),
            queue: VecDeque::new(),
        }
    }

    pub fn push(&mut self, chunk: planner::Chunk) {
        self.queue.push_back(chunk);
    }

    /// A consumer thread finished its chunk.
    pub fn release(&mut self) {
        self.free += 1;
    }

    /// Starts queued chunks while threads are free: each takes the CPU model's time, and
    /// `consumed(chunk, busy_ns)` is scheduled at its end.
    pub fn start<L>(
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
            local.push(now.saturating_add(ns), consumed(chunk.id, ns));
        }
    }
}
