//! ClickHouse's redesigned coalescing (`docs/readpath.md` R2 and R8; the redesign's design notes,
//! Altinity/ClickHouse `docs/superpowers/specs/2026-08-27-parquet-readpath-redesign.md`,
//! "Coalescing cost model"). Greedy in offset order; the next range joins the current task
//! when all of these hold:
//!
//! - gap rule: the gap's uncached bytes are fewer than `min(coalesce_gap_bytes,
//!   min_bytes_for_seek)` (a `coalesce_gap_bytes` of 0 means `min_bytes_for_seek`;
//!   `Prefetcher.cpp`'s `end_offset + gap_bytes <= r.start` refuses a gap of exactly that);
//!   with `read_through_cached`, bytes the source already holds are free (R8), otherwise every
//!   gap byte counts. Two differences from the code read (`README.md`, "Known gaps"): there a
//!   gap is free only when `gapIsCached` finds all of it held (a partly cached gap counts
//!   whole), and the base's incidental-read rule (one range set per task; a long range joins
//!   only if likely used) applies to the redesign too;
//! - cap: the next range ends less than `bytes_per_read_task` past the first range's end (the
//!   base's rule, `Prefetcher.cpp` "Go right", which the redesign keeps);
//! - amplification: the task's wasted bytes (uncached gap bytes) stay `<= floor`, or
//!   `(needed + wasted) / needed <= max_read_amplification` (0 = no bound).
//!
//! So every task either wastes at most the floor or stays within the ratio.

use crate::build::{greedy_runs, whole_task};
use crate::policy::derive_bytes_per_read_task;
use crate::types::{CachedBytes, NeededRange, ReadTask};
use layout::ByteRange;

/// The redesign's settings, resolved.
pub(crate) struct Redesign {
    pub effective_gap_bytes: u64,
    pub max_read_amplification: f64,
    pub read_amplification_floor_bytes: u64,
    pub bytes_per_read_task: u64,
    pub read_through_cached: bool,
}

impl Redesign {
    pub(crate) fn new(
        min_bytes_for_seek: u64,
        coalesce_gap_bytes: u64,
        max_read_amplification: f64,
        read_amplification_floor_bytes: u64,
        bytes_per_read_task: u64,
        read_through_cached: bool,
    ) -> Self {
        Redesign {
            effective_gap_bytes: effective_gap_bytes(coalesce_gap_bytes, min_bytes_for_seek),
            max_read_amplification,
            read_amplification_floor_bytes,
            bytes_per_read_task: derive_bytes_per_read_task(
                min_bytes_for_seek,
                bytes_per_read_task,
            ),
            read_through_cached,
        }
    }

    /// Whether a task reading `needed_bytes` with `wasted_bytes` of uncached gap is allowed.
    pub(crate) fn amplification_ok(&self, needed_bytes: u64, wasted_bytes: u64) -> bool {
        wasted_bytes <= self.read_amplification_floor_bytes
            || self.max_read_amplification == 0.0
            || (needed_bytes as f64 + wasted_bytes as f64)
                <= self.max_read_amplification * needed_bytes as f64
    }
}

/// `coalesce_gap_bytes` as the redesign reads it: "or min_bytes_for_seek if the setting is 0",
/// and never past `min_bytes_for_seek`.
pub(crate) fn effective_gap_bytes(coalesce_gap_bytes: u64, min_bytes_for_seek: u64) -> u64 {
    if coalesce_gap_bytes == 0 {
        min_bytes_for_seek
    } else {
        coalesce_gap_bytes.min(min_bytes_for_seek)
    }
}

pub(crate) fn clickhouse_redesign(
    needed: &[NeededRange],
    cached: &dyn CachedBytes,
    p: &Redesign,
) -> Vec<ReadTask> {
    let mut tasks = Vec::new();
    greedy_runs(
        needed,
        |run, n| {
            if run.first_end.saturating_add(p.bytes_per_read_task) <= n.range.end {
                return None;
            }
            let gap = n.range.start - run.end;
            let cached_bytes = if p.read_through_cached && gap > 0 {
                cached
                    .cached_bytes(ByteRange::new(run.end, n.range.start))
                    .min(gap)
            } else {
                0
            };
            let uncached = gap - cached_bytes;
            if uncached > 0 && uncached >= p.effective_gap_bytes {
                return None;
            }
            let wasted = run.wasted_bytes + uncached;
            p.amplification_ok(run.needed_bytes + n.range.len(), wasted)
                .then_some(uncached)
        },
        |run| tasks.push(whole_task(needed, run.first, run.last)),
    );
    tasks
}
