//! The real world for the driver loop (`drive::run_in`): the same `planner::Reader` as a
//! simulated run, with a real clock and real ranged GETs.
//!
//! Reads run as tasks on a tokio runtime and send their events over a channel, stamped with the
//! run's clock. The loop's CPU stand-ins (decode, source threads, consumers) *wait* for the CPU
//! model's time instead of burning it: the modelled node has many cores and this machine has
//! two, so burning CPU would measure this machine rather than the model, and would steal cycles
//! from the request tasks. The loop's deadlines are served by `recv_timeout` on the channel
//! (sub-millisecond precision, unlike tokio's 1 ms timer wheel).

use crate::clock::Clock;
use crate::counters::RequestLog;
use crate::fetch::{self, FetchJob, FetchPolicy, Msg};
use drive::metrics::StoreFigures;
use drive::{RunError, TraceRow, World};
use object_store::path::Path;
use object_store::ObjectStore;
use planner::{CacheView, Event, NoCache, Object, ReadRequest};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Duration;

/// With no event for this long while reads are running, the run is declared stuck.
const WATCHDOG: Duration = Duration::from_secs(300);

/// Where a real run reads: the store, the key of each data file, and a runtime for the
/// request tasks.
#[derive(Clone)]
pub struct RealStoreView<'a> {
    pub store: Arc<dyn ObjectStore>,
    /// Object path of data file `i` (see `keys::table_keys`).
    pub keys: &'a [Path],
    pub runtime: &'a tokio::runtime::Handle,
}

/// One run against a real store.
pub struct S3World<'a> {
    view: RealStoreView<'a>,
    policy: Arc<FetchPolicy>,
    price: models::store::PriceSpec,
    clock: Clock,
    tx: Sender<Msg>,
    rx: Receiver<Msg>,
    log: RequestLog,
    reads_open: u64,
    /// The dependent round trips among the reads sent (the lower bound's chain).
    round_trips: drive::bound::StoreRoundTrips,
    /// Every read task this run spawned: aborted when the run ends, so that a failed run's
    /// reads do not go on fetching into the next run's measurement.
    tasks: Vec<tokio::task::AbortHandle>,
}

impl Drop for S3World<'_> {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl<'a> S3World<'a> {
    /// A world whose clock starts now.
    pub fn new(view: RealStoreView<'a>, store: &models::store::StoreSpec) -> Self {
        let (tx, rx) = mpsc::channel::<Msg>();
        S3World {
            view,
            policy: Arc::new(FetchPolicy::from_store(store)),
            price: store.price.clone(),
            clock: Clock::start(),
            tx,
            rx,
            log: RequestLog::default(),
            reads_open: 0,
            round_trips: Default::default(),
            tasks: Vec::new(),
        }
    }

    /// Reads the reader no longer waits for (none in a well-formed run) still report their
    /// attempts; collects what has arrived without waiting for stragglers.
    fn drain_attempts(&mut self) {
        while let Ok(msg) = self.rx.try_recv() {
            if let Msg::Attempt(a) = msg {
                self.log.push(a);
            }
        }
    }

    fn take(&mut self, msg: Msg, events: &mut Vec<(u64, Event)>) {
        match msg {
            Msg::Attempt(a) => self.log.push(a),
            Msg::Reader { at_ns, event } => {
                if matches!(
                    event,
                    Event::ReadCompleted { .. } | Event::ReadFailed { .. }
                ) {
                    debug_assert!(self.reads_open > 0, "a read ended that was not open");
                    self.reads_open = self.reads_open.saturating_sub(1);
                }
                events.push((at_ns, event));
            }
        }
    }
}

impl World for S3World<'_> {
    fn now(&self, now_ns: u64) -> u64 {
        self.clock.now_ns().max(now_ns)
    }

    fn start_read(&mut self, _now_ns: u64, req: ReadRequest) -> Result<(), RunError> {
        let Object::Data(file) = req.object else {
            return Err(RunError::Read(format!(
                "the reader asked for {} but the real driver reads data files only \
                 (set `caches.iceberg_metadata: warm`)",
                req.object
            )));
        };
        let path = self.view.keys.get(file as usize).cloned().ok_or_else(|| {
            RunError::Read(format!(
                "the reader asked for data file {file}, but the table has {} files",
                self.view.keys.len()
            ))
        })?;
        self.reads_open += 1;
        self.round_trips.record(&req.object, req.kind);
        let job = FetchJob {
            store: self.view.store.clone(),
            path,
            object: file as u64,
            read: req.id,
            range: req.range,
            clock: self.clock,
            policy: self.policy.clone(),
        };
        let task = self.view.runtime.spawn(fetch::run(job, self.tx.clone()));
        self.tasks.push(task.abort_handle());
        Ok(())
    }

    fn wait(
        &mut self,
        _now_ns: u64,
        deadline_ns: Option<u64>,
        events: &mut Vec<(u64, Event)>,
    ) -> Result<Option<u64>, RunError> {
        if deadline_ns.is_none() && self.reads_open == 0 {
            return Ok(None);
        }
        let wait = match deadline_ns {
            Some(d) => Duration::from_nanos(d.saturating_sub(self.clock.now_ns())),
            None => WATCHDOG,
        };
        let first = if wait.is_zero() {
            self.rx.try_recv().ok()
        } else {
            match self.rx.recv_timeout(wait) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) if deadline_ns.is_none() => {
                    return Err(RunError::Read(format!(
                        "no event for {} s with {} reads running: the store stopped answering",
                        WATCHDOG.as_secs(),
                        self.reads_open
                    )))
                }
                Err(_) => None,
            }
        };
        // Everything that arrived.
        if let Some(m) = first {
            self.take(m, events);
        }
        while let Ok(m) = self.rx.try_recv() {
            self.take(m, events);
        }
        Ok(Some(self.clock.now_ns()))
    }

    fn reads_open(&self) -> u64 {
        self.reads_open
    }

    fn cache_view(&self) -> &dyn CacheView {
        &NoCache
    }

    /// The lower bound takes this run's own figures, not the store model's (which a
    /// measurement does not use): the chain of round trips it sent, each at least the smallest
    /// first byte it measured.
    fn store_figures(&mut self, _wall_ns: u64) -> StoreFigures {
        self.drain_attempts();
        StoreFigures {
            round_trips: std::mem::take(&mut self.round_trips),
            floor: drive::bound::StoreFloor::Measured {
                first_byte_ns: self.log.min_first_byte_ns().unwrap_or(0),
            },
            ..self.log.stats(&self.price)
        }
    }

    fn take_trace(&mut self) -> Vec<TraceRow> {
        self.drain_attempts();
        self.log.trace()
    }
}
