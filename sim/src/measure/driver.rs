//! The real driver's loop for one query of one arm: the same `planner::Reader` as the simulated
//! driver (`driver::run_once`), driven in the same order (drain `poll_action`, wait for the
//! next event, feed every event that arrived, repeat), with a real clock and real IO.
//!
//! One thread (the caller's) owns the reader. Reads run as tasks on a tokio runtime and send
//! their events over a channel, stamped with the run's clock. Decodes and the downstream
//! consumer are stand-ins that *wait* for the CPU model's time instead of burning it: the
//! modelled node has many cores and this machine has two, so burning CPU would measure this
//! machine rather than the model, and would steal cycles from the request tasks. The waits are
//! deadlines in the driver's own queue, served by `recv_timeout` on the channel (sub-millisecond
//! precision, unlike tokio's 1 ms timer wheel).

use super::clock::Clock;
use super::counters::RequestLog;
use super::fetch::{self, FetchJob, FetchPolicy, Msg};
use crate::driver::metrics::{collect_metrics, RunFigures};
use crate::driver::{RunError, RunOutput};
use crate::scenario::{Resolved, ResolvedArm, ResolvedQuery};
use engine::EventQueue;
use object_store::path::Path;
use object_store::ObjectStore;
use planner::{Action, Event, NoCache, Object, Reader};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// The world a real run reads: the store, the key of each data file, and a runtime for the
/// request tasks.
pub struct RealWorld<'a> {
    pub store: Arc<dyn ObjectStore>,
    /// Object path of data file `i` (see `keys::table_keys`).
    pub keys: &'a [Path],
    pub runtime: &'a tokio::runtime::Handle,
}

/// With no event for this long while reads are running, the run is declared stuck.
const WATCHDOG: Duration = Duration::from_secs(300);

enum Local {
    DecodeDone { id: planner::DecodeId, busy_ns: u64 },
    Consumed { id: planner::ChunkId, busy_ns: u64 },
}

/// Runs one query of one arm for real; the output has the simulated run's metrics, trace and
/// (with `timeline`) timeline formats. The timeline's GETs in flight are the requests open.
pub fn measure_once(
    r: &Resolved,
    arm: &ResolvedArm,
    query: &ResolvedQuery,
    world: &RealWorld<'_>,
    timeline: bool,
) -> Result<RunOutput, RunError> {
    let mut reader = Reader::new(r.table.clone(), query.spec.clone(), arm.strategy.clone())
        .map_err(|e| RunError::Plan(e.to_string()))?;
    let policy = Arc::new(FetchPolicy::from_store(&r.store));
    let (tx, rx) = mpsc::channel::<Msg>();
    let mut log = RequestLog::default();
    let mut local: EventQueue<Local> = EventQueue::new();
    let mut consumers = crate::driver::Consumers::new(r);
    let mut decode_busy_ns: u64 = 0;
    let mut consumer_busy_ns: u64 = 0;
    let mut reads_open: u64 = 0;
    let mut batch: Vec<(u64, Event)> = Vec::new();
    let mut timeline = crate::driver::timeline::Recorder::new(timeline);
    let clock = Clock::start();
    let mut now: u64 = 0;

    loop {
        now = clock.now_ns().max(now);
        while let Some(action) = reader.poll_action(now, &NoCache) {
            match action {
                Action::Read(req) => {
                    let Object::Data(file) = req.object else {
                        return Err(RunError::Read(format!(
                            "the reader asked for {} but the real driver reads data files only \
                             (set `caches.iceberg_metadata: warm`)",
                            req.object
                        )));
                    };
                    let path = world.keys.get(file as usize).cloned().ok_or_else(|| {
                        RunError::Read(format!(
                            "the reader asked for data file {file}, but the table has {} files",
                            world.keys.len()
                        ))
                    })?;
                    reads_open += 1;
                    let job = FetchJob {
                        store: world.store.clone(),
                        path,
                        object: file as u64,
                        read: req.id,
                        range: req.range,
                        clock,
                        policy: policy.clone(),
                    };
                    world.runtime.spawn(fetch::run(job, tx.clone()));
                }
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
                Action::Deliver(chunk) => consumers.push(chunk),
            }
            consumers.start(r, now, &mut local, |id, busy_ns| Local::Consumed {
                id,
                busy_ns,
            });
        }
        timeline.sample(now, &reader, reads_open);
        if let Some(e) = reader.error() {
            return Err(RunError::Read(e.to_string()));
        }
        if reader.is_finished() {
            break;
        }

        // Wait for a message or the earliest deadline (a stand-in finishing, a reader timer).
        let deadline = [local.peek_time(), reader.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        if deadline.is_none() && reads_open == 0 {
            let s = reader.status();
            return Err(RunError::Stalled {
                at: units::format_duration_ns(now),
                reads_running: s.reads_running,
                reads_queued: s.reads_queued,
            });
        }
        let wait = match deadline {
            Some(d) => Duration::from_nanos(d.saturating_sub(clock.now_ns())),
            None => WATCHDOG,
        };
        let first = if wait.is_zero() {
            rx.try_recv().ok()
        } else {
            match rx.recv_timeout(wait) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) if deadline.is_none() => {
                    return Err(RunError::Read(format!(
                        "no event for {} s with {reads_open} reads running: the store stopped \
                         answering",
                        WATCHDOG.as_secs()
                    )))
                }
                Err(_) => None,
            }
        };
        // Everything that arrived, then every stand-in that is due, fed in time order.
        for msg in first
            .into_iter()
            .chain(std::iter::from_fn(|| rx.try_recv().ok()))
        {
            match msg {
                Msg::Attempt(a) => log.push(a),
                Msg::Reader { at_ns, event } => {
                    if matches!(
                        event,
                        Event::ReadCompleted { .. } | Event::ReadFailed { .. }
                    ) {
                        reads_open = reads_open.saturating_sub(1);
                    }
                    batch.push((at_ns, event));
                }
            }
        }
        let due = clock.now_ns();
        while local.peek_time().is_some_and(|t| t <= due) {
            let Some((t, ev)) = local.pop() else { break };
            match ev {
                Local::DecodeDone { id, busy_ns } => {
                    decode_busy_ns += busy_ns;
                    batch.push((t, Event::DecodeCompleted { id }));
                }
                Local::Consumed { id, busy_ns } => {
                    consumer_busy_ns += busy_ns;
                    consumers.release();
                    batch.push((t, Event::ChunkConsumed { id }));
                }
            }
        }
        batch.sort_by_key(|(t, _)| *t);
        for (t, ev) in batch.drain(..) {
            // Stamps from different tasks may trail a time the reader has already seen.
            now = t.max(now);
            reader.handle(now, ev);
        }
        if reader.poll_timeout().is_some_and(|t| t <= clock.now_ns()) {
            now = clock.now_ns().max(now);
            reader.handle_timeout(now);
        }
    }
    let wall_ns = now;
    timeline.sample(now, &reader, reads_open);
    // Reads the reader no longer waits for (none in a well-formed run) still report their
    // attempts; collect what has arrived without waiting for stragglers.
    while let Ok(msg) = rx.try_recv() {
        if let Msg::Attempt(a) = msg {
            log.push(a);
        }
    }
    let figures = RunFigures {
        wall_ns,
        store: log.stats(&r.store.price),
        decode_busy_ns,
        consumer_busy_ns,
    };
    Ok(RunOutput {
        metrics: collect_metrics(&reader, &figures),
        trace: {
            // Requests, then the ranges the reader needed, as `run_once` writes them.
            let mut t = log.trace();
            t.extend(crate::driver::trace::needed_rows(
                &r.table,
                &query.spec,
                &arm.strategy,
            ));
            t
        },
        timeline: timeline.rows,
    })
}
