//! Arrow C++: `ReadRangeCombiner::Coalesce` (apache/arrow `cpp/src/arrow/io/interfaces.cc`):
//! a new read starts when `current_end - coalesced_start > range_size_limit` or
//! `current_start - prev_end > hole_size_limit`. A single range above the limit stays whole.

use super::merge_whole;
use crate::types::{NeededRange, ReadTask};

pub(crate) fn arrow_cpp(
    needed: &[NeededRange],
    hole_size_limit_bytes: u64,
    range_size_limit_bytes: u64,
) -> Vec<ReadTask> {
    merge_whole(needed, |run, n| {
        n.range.end - run.start <= range_size_limit_bytes
            && n.range.start - run.end <= hole_size_limit_bytes
    })
}
