//! One merge rule per reader. Each function takes checked input (see `input.rs`) and a valid
//! policy, and returns tasks in offset order.

mod arrow_cpp;
mod arrow_rs;
mod clickhouse_base;
mod clickhouse_redesign;
mod duckdb;
mod hadoop_s3a;
mod polars;
mod trino;
mod velox;

pub(crate) use arrow_cpp::arrow_cpp;
pub(crate) use arrow_rs::arrow_rs;
pub(crate) use clickhouse_base::clickhouse_base;
pub(crate) use clickhouse_redesign::{clickhouse_redesign, effective_gap_bytes, Redesign};
pub(crate) use duckdb::duckdb;
pub(crate) use hadoop_s3a::hadoop_s3a;
pub(crate) use polars::polars;
pub(crate) use trino::trino;
pub(crate) use velox::velox;

use crate::build::{greedy_runs, whole_task, Run};
use crate::types::{NeededRange, ReadTask};

/// Greedy merging of whole ranges where `join(run, next)` says whether `next` joins (gap bytes
/// are not tracked as waste).
pub(crate) fn merge_whole(
    needed: &[NeededRange],
    mut join: impl FnMut(&Run, &NeededRange) -> bool,
) -> Vec<ReadTask> {
    let mut tasks = Vec::new();
    greedy_runs(
        needed,
        |run, n| join(run, n).then_some(0),
        |run| tasks.push(whole_task(needed, run.first, run.last)),
    );
    tasks
}
