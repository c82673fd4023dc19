//! Readiness of a read task's sub-ranges (R1). A task's bytes arrive in offset order; the
//! driver reports the cumulative `bytes_ready` (1 MiB progress chunks on S3; a local `pread`
//! reports none: ready = done). With R1 a sub-range is served as soon as `bytes_ready` covers
//! it; without R1 (the base reader's whole-task readiness) nothing is served before the task
//! completes. Either way each sub-range is served exactly once, in offset order.

use std::ops::Range;

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use crate::error::ReadaheadError;
use crate::events::{ProfileEvent, ProfileEvents};

/// Size of the progress chunks an HTTP body streams in (S3 and HTTP sources).
pub const PROGRESS_CHUNK_BYTES: u64 = 1 << 20;

/// A sub-range a read task serves, relative to the task's first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SubRange {
    /// Offset from the task's first byte.
    pub task_offset: u64,
    /// Length in bytes.
    pub len: u64,
}

impl SubRange {
    /// One past the last byte, relative to the task (saturating).
    pub fn task_end(&self) -> u64 {
        self.task_offset.saturating_add(self.len)
    }
}

/// Readiness state of one read task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskReadiness {
    task_len: u64,
    /// Most tasks serve at most four sub-ranges: inline, no allocation per task.
    ranges: SmallVec<[SubRange; 4]>,
    served: usize,
    bytes_ready: u64,
    complete: bool,
    partial_readiness: bool,
}

impl TaskReadiness {
    /// A task of `task_len` bytes serving `ranges` (sorted by `task_offset`, each within the
    /// task). `partial_readiness` = R1.
    pub fn new(
        task_len: u64,
        ranges: impl IntoIterator<Item = SubRange>,
        partial_readiness: bool,
    ) -> Result<TaskReadiness, ReadaheadError> {
        let ranges: SmallVec<[SubRange; 4]> = ranges.into_iter().collect();
        let mut previous_offset = 0;
        for (index, range) in ranges.iter().enumerate() {
            let bad = |why| ReadaheadError::BadSubRange {
                index,
                task_offset: range.task_offset,
                len: range.len,
                task_len,
                why,
            };
            match range.task_offset.checked_add(range.len) {
                Some(end) if end <= task_len => {}
                _ => {
                    return Err(bad(
                        "it ends past the task; sub-ranges must lie within their task",
                    ))
                }
            }
            if range.task_offset < previous_offset {
                return Err(bad(
                    "it starts before the previous one; sub-ranges must be sorted by offset",
                ));
            }
            previous_offset = range.task_offset;
        }
        Ok(TaskReadiness {
            task_len,
            ranges,
            served: 0,
            bytes_ready: 0,
            complete: false,
            partial_readiness,
        })
    }

    /// Bytes of the task.
    pub fn task_len(&self) -> u64 {
        self.task_len
    }

    /// The sub-ranges, in offset order.
    pub fn ranges(&self) -> &[SubRange] {
        &self.ranges
    }

    /// Cumulative bytes received so far.
    pub fn bytes_ready(&self) -> u64 {
        self.bytes_ready
    }

    /// Sub-ranges served so far (they are always a prefix of [`ranges`](Self::ranges)).
    pub fn served(&self) -> usize {
        self.served
    }

    /// Whether sub-range `index` was served.
    pub fn is_served(&self, index: usize) -> bool {
        index < self.served
    }

    /// Whether the task completed.
    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Whether every sub-range was served.
    pub fn all_served(&self) -> bool {
        self.served == self.ranges.len()
    }

    /// Advances `bytes_ready` (cumulative; a smaller value than before is ignored) and returns
    /// the indexes of the sub-ranges that became servable (empty without R1). Each range served
    /// here while the task is not yet fully received counts `ParquetPartialReadsServed`.
    pub fn on_progress(&mut self, bytes_ready: u64, events: &mut ProfileEvents) -> Range<usize> {
        self.bytes_ready = self.bytes_ready.max(bytes_ready.min(self.task_len));
        if !self.partial_readiness || self.complete {
            return self.served..self.served;
        }
        let newly = self.advance(self.bytes_ready);
        if self.bytes_ready < self.task_len {
            events.add(ProfileEvent::ParquetPartialReadsServed, newly.len() as u64);
        }
        newly
    }

    /// The task completed: every sub-range not yet served becomes servable now.
    pub fn on_complete(&mut self) -> Range<usize> {
        self.complete = true;
        self.bytes_ready = self.task_len;
        self.advance(self.task_len)
    }

    /// Serves, in offset order, every range whose end is covered; stops at the first that is
    /// not, so order is kept even when a later, shorter range is already covered.
    fn advance(&mut self, covered: u64) -> Range<usize> {
        let start = self.served;
        while self
            .ranges
            .get(self.served)
            .is_some_and(|r| r.task_end() <= covered)
        {
            self.served += 1;
        }
        start..self.served
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIB: u64 = PROGRESS_CHUNK_BYTES;

    fn ranges(spec: &[(u64, u64)]) -> Vec<SubRange> {
        spec.iter()
            .map(|&(task_offset, len)| SubRange { task_offset, len })
            .collect()
    }

    #[test]
    fn r1_serves_as_bytes_arrive() {
        let mut events = ProfileEvents::new();
        let mut task = TaskReadiness::new(
            4 * MIB,
            ranges(&[(0, 100), (MIB / 2, MIB), (3 * MIB, MIB)]),
            true,
        )
        .unwrap();
        assert_eq!(task.on_progress(MIB, &mut events), 0..1);
        assert_eq!(task.on_progress(2 * MIB, &mut events), 1..2);
        assert_eq!(task.on_progress(3 * MIB, &mut events), 2..2);
        assert_eq!(events.parquet_partial_reads_served, 2);
        assert_eq!(task.on_complete(), 2..3);
        assert!(task.all_served());
        assert_eq!(
            events.parquet_partial_reads_served, 2,
            "ranges served at completion are not partial"
        );
    }

    #[test]
    fn without_r1_nothing_is_served_before_completion() {
        let mut events = ProfileEvents::new();
        let mut task =
            TaskReadiness::new(4 * MIB, ranges(&[(0, 100), (3 * MIB, MIB)]), false).unwrap();
        assert_eq!(task.on_progress(4 * MIB - 1, &mut events), 0..0);
        assert_eq!(task.bytes_ready(), 4 * MIB - 1);
        assert_eq!(task.on_complete(), 0..2);
        assert_eq!(events.parquet_partial_reads_served, 0);
    }

    #[test]
    fn final_progress_at_full_length_is_not_partial() {
        let mut events = ProfileEvents::new();
        let mut task = TaskReadiness::new(2 * MIB, ranges(&[(0, 2 * MIB)]), true).unwrap();
        assert_eq!(task.on_progress(2 * MIB, &mut events), 0..1);
        assert_eq!(events.parquet_partial_reads_served, 0);
        assert_eq!(task.on_complete(), 1..1);
    }

    #[test]
    fn order_is_kept_when_a_later_range_is_covered_first() {
        let mut events = ProfileEvents::new();
        // The first range spans the whole task; a nested shorter one waits for it.
        let mut task =
            TaskReadiness::new(3 * MIB, ranges(&[(0, 3 * MIB), (10, 10)]), true).unwrap();
        assert_eq!(task.on_progress(MIB, &mut events), 0..0);
        assert!(!task.is_served(1));
        assert_eq!(task.on_complete(), 0..2);
    }

    #[test]
    fn bad_sub_ranges_are_errors() {
        let past_end = TaskReadiness::new(100, ranges(&[(50, 51)]), true).unwrap_err();
        assert!(
            past_end.to_string().contains("ends past the task"),
            "{past_end}"
        );
        assert!(matches!(
            TaskReadiness::new(100, ranges(&[(50, 1), (10, 1)]), true),
            Err(ReadaheadError::BadSubRange { index: 1, .. })
        ));
        assert!(TaskReadiness::new(100, ranges(&[(u64::MAX, 2)]), true).is_err());
        assert!(TaskReadiness::new(100, ranges(&[(0, 100), (0, 0), (100, 0)]), true).is_ok());
    }

    fn sorted_ranges() -> impl Strategy<Value = (u64, Vec<SubRange>)> {
        (1u64..16 * MIB).prop_flat_map(|task_len| {
            let range =
                (0..task_len).prop_flat_map(move |offset| (Just(offset), 0..=(task_len - offset)));
            (Just(task_len), proptest::collection::vec(range, 0..20)).prop_map(
                |(task_len, mut spec)| {
                    spec.sort_unstable();
                    (
                        task_len,
                        spec.into_iter()
                            .map(|(task_offset, len)| SubRange { task_offset, len })
                            .collect(),
                    )
                },
            )
        })
    }

    proptest! {
        /// Each range is served exactly once, in offset order, never before its bytes are ready
        /// (with R1) or before completion (without).
        #[test]
        fn serves_each_range_once_in_order(
            (task_len, spec) in sorted_ranges(),
            progress in proptest::collection::vec(0u64..20 * MIB, 0..30),
            r1 in any::<bool>(),
        ) {
            let mut events = ProfileEvents::new();
            let mut task = TaskReadiness::new(task_len, spec.clone(), r1).unwrap();
            let mut served = Vec::new();
            let mut ready = 0u64;
            for step in progress {
                let newly = task.on_progress(step, &mut events);
                ready = ready.max(step.min(task_len));
                prop_assert!(r1 || newly.is_empty());
                for index in newly {
                    prop_assert!(spec[index].task_end() <= ready);
                    served.push(index);
                }
            }
            served.extend(task.on_complete());
            prop_assert_eq!(served, (0..spec.len()).collect::<Vec<_>>());
            prop_assert!(task.all_served());
            prop_assert!(events.parquet_partial_reads_served <= spec.len() as u64);
        }
    }
}
