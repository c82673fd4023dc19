//! ClickHouse base's lazy coalescing (`Prefetcher::pickRangesAndCreateTask` in
//! ClickHouse/ClickHouse `src/Processors/Formats/Impl/Parquet/Prefetcher.cpp`). Ranges are
//! registered up front; a task is made when a range is first needed. It extends left, then
//! right, over sorted neighbours that are not yet in a task, while:
//!
//! - the gap is `< min_bytes_for_seek`;
//! - leftwards, a neighbour starts less than `bytes_per_read_task` before the first range's
//!   start; rightwards, it ends less than `bytes_per_read_task` past the first range's end
//!   (`initial_offset = end_offset` before "Go right": the generation the redesign was built
//!   on; the first generation counted the right side from the task's start too);
//! - the neighbour allows an incidental read: it is likely used or shorter than
//!   `min_bytes_for_seek`;
//! - the neighbour has the first range's `group` (split sub-ranges coalesce only with each
//!   other; see [`crate::NeededRange`]).
//!
//! Extension stops at the first neighbour that fails, or that already has a task.

use crate::build::whole_task;
use crate::error::CoalesceError;
use crate::input::check_needed;
use crate::policy::{derive_bytes_per_read_task, CoalescePolicy};
use crate::types::{NeededRange, ReadTask};

/// ClickHouse base's lazy coalescer: register ranges with [`LazyCoalescer::new`], then ask for
/// the task of each range as it is first needed with [`LazyCoalescer::task_for`].
#[derive(Clone, Debug)]
pub struct LazyCoalescer {
    needed: Vec<NeededRange>,
    started: Vec<bool>,
    min_bytes_for_seek: u64,
    bytes_per_read_task: u64,
}

impl LazyCoalescer {
    /// Registers `needed` (sorted by start, non-overlapping, non-empty). `bytes_per_read_task`
    /// 0 derives 4 x `min_bytes_for_seek`, as ClickHouse does.
    pub fn new(
        needed: Vec<NeededRange>,
        min_bytes_for_seek: u64,
        bytes_per_read_task: u64,
    ) -> Result<Self, CoalesceError> {
        check_needed(&needed)?;
        let started = vec![false; needed.len()];
        Ok(LazyCoalescer {
            needed,
            started,
            min_bytes_for_seek,
            bytes_per_read_task: derive_bytes_per_read_task(
                min_bytes_for_seek,
                bytes_per_read_task,
            ),
        })
    }

    /// A lazy coalescer with a `ClickHouseBase` policy's settings; other policies coalesce in
    /// batch only (use [`crate::coalesce`]).
    pub fn for_policy(
        needed: Vec<NeededRange>,
        policy: &CoalescePolicy,
    ) -> Result<Self, CoalesceError> {
        match *policy {
            CoalescePolicy::ClickHouseBase {
                min_bytes_for_seek,
                bytes_per_read_task,
            } => Self::new(needed, min_bytes_for_seek, bytes_per_read_task),
            _ => Err(CoalesceError::NotLazy {
                preset: policy.family(),
            }),
        }
    }

    /// The registered ranges.
    pub fn needed(&self) -> &[NeededRange] {
        &self.needed
    }

    /// Whether range `needed` is already in a task.
    pub fn is_started(&self, needed: u32) -> bool {
        self.started.get(needed as usize).copied().unwrap_or(false)
    }

    /// The task that reads range `needed` and the not-yet-started neighbours it extends over,
    /// or `None` if `needed` is already in a task. Errors if `needed` is not a registered index.
    pub fn task_for(&mut self, needed: u32) -> Result<Option<ReadTask>, CoalesceError> {
        let i = needed as usize;
        let Some(&first) = self.needed.get(i) else {
            return Err(CoalesceError::NoSuchRange {
                index: needed,
                len: self.needed.len(),
            });
        };
        if self.started.get(i).copied().unwrap_or(true) {
            return Ok(None);
        }
        let seek = self.min_bytes_for_seek;
        let cap = self.bytes_per_read_task;
        let joins = |r: &NeededRange, started: bool| {
            !started && r.group == first.group && (r.range.len() < seek || r.likely_used)
        };

        // Leftwards: gap `< seek`, and the neighbour starts less than `cap` before `first`.
        let mut start_idx = i;
        let mut prev_offset = first.range.start;
        while let Some(k) = start_idx.checked_sub(1) {
            let (Some(r), Some(&s)) = (self.needed.get(k), self.started.get(k)) else {
                break;
            };
            if r.range.end.saturating_add(seek) <= prev_offset
                || r.range.start.saturating_add(cap) <= first.range.start
                || !joins(r, s)
            {
                break;
            }
            start_idx = k;
            prev_offset = r.range.start;
        }

        // Rightwards: gap `< seek`, and a neighbour ends less than `cap` past the first range's
        // end (sorted, non-overlapping ranges: no left neighbour ends past it).
        let mut end_idx = i;
        let mut prev_end = first.range.end;
        while let (Some(r), Some(&s)) =
            (self.needed.get(end_idx + 1), self.started.get(end_idx + 1))
        {
            if prev_end.saturating_add(seek) <= r.range.start
                || first.range.end.saturating_add(cap) <= r.range.end
                || !joins(r, s)
            {
                break;
            }
            end_idx += 1;
            prev_end = r.range.end;
        }

        if let Some(flags) = self.started.get_mut(start_idx..=end_idx) {
            flags.fill(true);
        }
        Ok(Some(whole_task(&self.needed, start_idx, end_idx)))
    }
}
