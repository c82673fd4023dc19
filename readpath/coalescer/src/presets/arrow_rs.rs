//! arrow-rs: object_store 0.14 `merge_ranges` (apache/arrow-rs-object-store `src/util.rs`):
//! a range joins the current read while `start - current_end <= coalesce` (overlaps always
//! join); no cap on the merged size.

use super::merge_whole;
use crate::types::{NeededRange, ReadTask};

pub(crate) fn arrow_rs(needed: &[NeededRange], coalesce_bytes: u64) -> Vec<ReadTask> {
    merge_whole(needed, |run, n| n.range.start - run.end <= coalesce_bytes)
}
