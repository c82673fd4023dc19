//! ClickHouse base, batch form: every range issued lazily in offset order. When ranges are
//! issued in offset order every left neighbour is already in a task, so only the rightward
//! extension of `Prefetcher::pickRangesAndCreateTask` acts (see `lazy.rs`); this is that
//! extension as one greedy pass, without the lazy bookkeeping. A property test checks it
//! against [`crate::LazyCoalescer`].

use super::merge_whole;
use crate::policy::derive_bytes_per_read_task;
use crate::types::{NeededRange, ReadTask};

pub(crate) fn clickhouse_base(
    needed: &[NeededRange],
    min_bytes_for_seek: u64,
    bytes_per_read_task: u64,
) -> Vec<ReadTask> {
    let cap = derive_bytes_per_read_task(min_bytes_for_seek, bytes_per_read_task);
    merge_whole(needed, |run, n| {
        let first_group = needed.get(run.first).map(|f| f.group);
        run.end.saturating_add(min_bytes_for_seek) > n.range.start
            && run.first_end.saturating_add(cap) > n.range.end
            && (n.range.len() < min_bytes_for_seek || n.likely_used)
            && first_group == Some(n.group)
    })
}
