//! Velox: `coalesceIo` (facebookincubator/velox `velox/common/base/CoalesceIo.h`): adjacent
//! items share an IO, and a gap joins when `0 < gap < maxGap`; the merged read is capped at
//! `max_read_bytes` (the load quantum of `DirectBufferedInput`).

use super::merge_whole;
use crate::types::{NeededRange, ReadTask};

pub(crate) fn velox(
    needed: &[NeededRange],
    max_gap_bytes: u64,
    max_read_bytes: u64,
) -> Vec<ReadTask> {
    merge_whole(needed, |run, n| {
        let gap = n.range.start - run.end;
        (gap == 0 || gap < max_gap_bytes) && n.range.end - run.start <= max_read_bytes
    })
}
