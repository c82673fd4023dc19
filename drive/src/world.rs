//! What the outside world does for the driver loop ([`crate::run_once`]): start the reads the
//! reader asks for, say when they make progress, and keep the time.
//!
//! Two worlds implement it: [`crate::SimWorld`] (virtual time, the simulated store and caches)
//! and `drive_s3::S3World` (a real clock, real ranged GETs). The CPU stand-ins (decode, source
//! threads, consumers) are the loop's own, the same in both, so the only differences between a
//! simulated and a measured run are the ones this trait names.

use crate::metrics::StoreFigures;
use crate::trace::TraceRow;
use crate::{Recording, RunError, RunFailure, RunOutput};
use planner::{CacheView, Event, ReadRequest};
use scenario::{Resolved, ResolvedArm, ResolvedQuery};

/// The world of one run.
pub trait World {
    /// The time now, at least `now_ns` (the last time the loop saw). A virtual world returns
    /// `now_ns`; a real one reads its clock.
    fn now(&self, now_ns: u64) -> u64;

    /// Starts the read the reader asked for at `now_ns`.
    fn start_read(&mut self, now_ns: u64, req: ReadRequest) -> Result<(), RunError>;

    /// Waits until the next thing happens in the world or until `deadline_ns` (the loop's own
    /// next event: a decode or consumer finishing), whichever comes first. Appends the world's
    /// events with their times (each at most the returned time) and returns the new time, or
    /// `Ok(None)` when nothing will ever happen: no read is running and there is no deadline.
    fn wait(
        &mut self,
        now_ns: u64,
        deadline_ns: Option<u64>,
        events: &mut Vec<(u64, Event)>,
    ) -> Result<Option<u64>, RunError>;

    /// Whether nothing happens in the world up to and including `t_ns`, for certain, so that
    /// the loop need not advance it to `t_ns` (an instant at which only a CPU stand-in has
    /// something due). A virtual world knows its next event; a real one cannot promise.
    fn quiet_through(&self, _t_ns: u64) -> bool {
        false
    }

    /// Requests open now (the timeline's GETs in flight).
    fn reads_open(&self) -> u64;

    /// Which bytes the source already holds, for R8's coalescing through cached gaps.
    fn cache_view(&self) -> &dyn CacheView;

    /// What the store side did, at the end of a run that took `wall_ns`.
    fn store_figures(&mut self, wall_ns: u64) -> StoreFigures;

    /// The requests the world served, in start order (empty unless asked for).
    fn take_trace(&mut self) -> Vec<TraceRow>;
}

/// How the runs of a scenario meet their world. The orchestration (cases x arms x
/// replications x queries, written once in `experiments::run`) asks a runner for each run:
/// [`Simulated`] here, `drive_s3::Measured` for real runs.
pub trait Runner: Sync {
    /// Whether runs may go side by side. Simulated runs may (each is single-threaded and
    /// deterministic); real ones may not, as they would share the network and disturb each
    /// other.
    fn parallel(&self) -> bool;

    /// Refuses what the world cannot honour in a case, naming the scenario key. Called for
    /// every case before the first run of any.
    fn check_case(&self, r: &Resolved) -> Result<(), RunError>;

    /// Prepares what a case needs, right before its first run.
    fn open_case(&self, r: &Resolved) -> Result<(), RunError>;

    /// One query of one arm, one replication. A failed run returns the trace rows of the
    /// requests it had completed (when traced), so that they can still be written.
    fn run(
        &self,
        r: &Resolved,
        arm: &ResolvedArm,
        query_index: usize,
        query: &ResolvedQuery,
        replication: u32,
        rec: Recording,
    ) -> Result<RunOutput, RunFailure>;
}

/// Runs in the simulated world ([`crate::SimWorld`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Simulated;

impl Runner for Simulated {
    fn parallel(&self) -> bool {
        true
    }

    fn check_case(&self, _r: &Resolved) -> Result<(), RunError> {
        Ok(())
    }

    fn open_case(&self, _r: &Resolved) -> Result<(), RunError> {
        Ok(())
    }

    fn run(
        &self,
        r: &Resolved,
        arm: &ResolvedArm,
        query_index: usize,
        query: &ResolvedQuery,
        replication: u32,
        rec: Recording,
    ) -> Result<RunOutput, RunFailure> {
        crate::run_once(r, arm, query_index, query, replication, rec).map_err(RunFailure::from)
    }
}
