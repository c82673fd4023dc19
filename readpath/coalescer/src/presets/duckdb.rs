//! DuckDB: `ReadAheadBuffer::AddReadHead` with `ReadHeadComparator` (duckdb
//! `extension/parquet/include/thrift_tools.hpp`): a range joins a head when
//! `head.end + ALLOW_GAP >= start`; heads have no size cap. Ranges arrive here in offset order,
//! so each joins the last head or opens a new one.

use super::merge_whole;
use crate::types::{NeededRange, ReadTask};

pub(crate) fn duckdb(needed: &[NeededRange], gap_bytes: u64) -> Vec<ReadTask> {
    merge_whole(needed, |run, n| {
        run.end.saturating_add(gap_bytes) >= n.range.start
    })
}
