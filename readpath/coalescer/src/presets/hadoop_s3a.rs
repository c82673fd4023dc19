//! Hadoop S3A vectored reads: `VectoredReadUtils.mergeSortedRanges` and
//! `CombinedFileRange.merge` (apache/hadoop): a merge is refused when
//! `other.start - end >= minSeek` or the merged length exceeds `maxSize`. S3A passes a chunk
//! size of 1 (no rounding).

use super::merge_whole;
use crate::types::{NeededRange, ReadTask};

pub(crate) fn hadoop_s3a(
    needed: &[NeededRange],
    min_seek_bytes: u64,
    max_merged_bytes: u64,
) -> Vec<ReadTask> {
    merge_whole(needed, |run, n| {
        n.range.start - run.end < min_seek_bytes && n.range.end - run.start <= max_merged_bytes
    })
}
