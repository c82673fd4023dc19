//! The simulated world: virtual time, the store model's client, the page and filesystem caches
//! (all in [`crate::io::IoWorld`]). Time jumps from one event to the next.

use crate::io::IoWorld;
use crate::metrics::StoreFigures;
use crate::trace::TraceRow;
use crate::world::World;
use crate::RunError;
use layout::{ByteRange, FileIndex};
use planner::{CacheView, Event, ReadRequest};
use scenario::{Resolved, ResolvedArm};

/// Virtual time over the simulated store and caches.
pub struct SimWorld {
    io: IoWorld,
    scratch: Vec<(u64, Event)>,
}

impl SimWorld {
    /// The world of one run: its random streams come from the run's seed (the scenario's root
    /// seed and the query, never the arm: arms see common random numbers) and the replication.
    pub fn new(
        r: &Resolved,
        arm: &ResolvedArm,
        query_index: usize,
        replication: u32,
        record_trace: bool,
    ) -> Result<Self, RunError> {
        let rngs = engine::RngStreams::new(crate::run_seed(r.seed, query_index));
        Ok(SimWorld {
            io: IoWorld::new(r, arm, &rngs, replication as u64, record_trace)?,
            scratch: Vec::new(),
        })
    }
}

impl CacheView for SimWorld {
    fn cached_bytes(&self, file: FileIndex, range: ByteRange) -> u64 {
        self.io.cache_view().cached_bytes(file, range)
    }
}

impl World for SimWorld {
    fn now(&self, now_ns: u64) -> u64 {
        now_ns
    }

    fn start_read(&mut self, now_ns: u64, req: ReadRequest) -> Result<(), RunError> {
        self.io.start(now_ns, req);
        Ok(())
    }

    fn wait(
        &mut self,
        now_ns: u64,
        deadline_ns: Option<u64>,
        events: &mut Vec<(u64, Event)>,
    ) -> Result<Option<u64>, RunError> {
        let Some(next) = crate::earliest(deadline_ns, self.io.next_event_ns()) else {
            return Ok(None);
        };
        let next = next.max(now_ns);
        self.io.advance(next, &mut self.scratch);
        // Everything the world did up to `next` happens, for the reader, at `next`.
        events.extend(self.scratch.drain(..).map(|(_, e)| (next, e)));
        Ok(Some(next))
    }

    /// Skipping an advance to such an instant changes nothing: the store's concurrency
    /// integral adds integer products (exact in `f64` below 2^53 ns x GETs) and no transfer or
    /// timer moves before its own event.
    fn quiet_through(&self, t_ns: u64) -> bool {
        self.io.next_event_ns().is_none_or(|n| n > t_ns)
    }

    fn reads_open(&self) -> u64 {
        self.io.active_gets()
    }

    fn cache_view(&self) -> &dyn CacheView {
        self
    }

    fn store_figures(&mut self, wall_ns: u64) -> StoreFigures {
        // The loop does not advance the world to an instant where only a CPU stand-in acts
        // ([`World::quiet_through`]); bring it to the end of the run, as a turn there would
        // have, so that the store's span ends where the run does.
        self.io.advance(wall_ns, &mut self.scratch);
        debug_assert!(
            self.scratch.is_empty(),
            "the world was quiet up to {wall_ns} ns"
        );
        self.scratch.clear();
        let store = self.io.store_stats();
        StoreFigures {
            gets: store.gets,
            heads: store.heads,
            lists: store.lists,
            bytes_fetched: store.bytes_fetched,
            retries: store.retries,
            get_busy_ns: store.mean_concurrency * store.span_ns as f64,
            peak_concurrency: store.peak_concurrency as u64,
            cost_usd: store.cost_usd,
            page_cache_read_through_bytes: self.io.page_cache_read_through_bytes(),
            round_trips: self.io.take_round_trips(),
            floor: crate::bound::StoreFloor::Model,
        }
    }

    fn take_trace(&mut self) -> Vec<TraceRow> {
        self.io.take_trace()
    }
}
