//! The batch entry point: check input and policy, then run the policy's merge rule.

use crate::error::CoalesceError;
use crate::input::check_needed;
use crate::policy::CoalescePolicy;
use crate::presets;
use crate::types::{CachedBytes, NeededRange, ReadTask};

/// Coalesces `needed` (sorted by start, non-overlapping, non-empty ranges) into read tasks in
/// offset order under `policy`. `cached` tells which gap bytes the source already holds; only
/// the redesign with `read_through_cached` asks it. For `ClickHouseBase` this is the result of
/// issuing every range lazily in offset order (see [`crate::LazyCoalescer`]).
///
/// Every needed byte is served by exactly one task, tasks never overlap, and each task's
/// `serves` are sorted by `task_offset`.
pub fn coalesce(
    needed: &[NeededRange],
    cached: &dyn CachedBytes,
    policy: &CoalescePolicy,
) -> Result<Vec<ReadTask>, CoalesceError> {
    check_needed(needed)?;
    policy.validate()?;
    Ok(match *policy {
        CoalescePolicy::ClickHouseBase {
            min_bytes_for_seek,
            bytes_per_read_task,
        } => presets::clickhouse_base(needed, min_bytes_for_seek, bytes_per_read_task),
        CoalescePolicy::ClickHouseRedesign {
            min_bytes_for_seek,
            coalesce_gap_bytes,
            max_read_amplification,
            read_amplification_floor_bytes,
            bytes_per_read_task,
            read_through_cached,
        } => presets::clickhouse_redesign(
            needed,
            cached,
            &presets::Redesign::new(
                min_bytes_for_seek,
                coalesce_gap_bytes,
                max_read_amplification,
                read_amplification_floor_bytes,
                bytes_per_read_task,
                read_through_cached,
            ),
        ),
        CoalescePolicy::ArrowRs { coalesce_bytes } => presets::arrow_rs(needed, coalesce_bytes),
        CoalescePolicy::ArrowCpp {
            hole_size_limit_bytes,
            range_size_limit_bytes,
        } => presets::arrow_cpp(needed, hole_size_limit_bytes, range_size_limit_bytes),
        CoalescePolicy::DuckDb { gap_bytes } => presets::duckdb(needed, gap_bytes),
        CoalescePolicy::Velox {
            max_gap_bytes,
            load_quantum_bytes,
            max_coalesced_bytes,
        } => presets::velox(
            needed,
            max_gap_bytes,
            load_quantum_bytes,
            max_coalesced_bytes,
        ),
        CoalescePolicy::Trino {
            max_merge_distance_bytes,
            max_buffer_size_bytes,
        } => presets::trino(needed, max_merge_distance_bytes, max_buffer_size_bytes),
        CoalescePolicy::HadoopS3a {
            min_seek_bytes,
            max_merged_bytes,
        } => presets::hadoop_s3a(needed, min_seek_bytes, max_merged_bytes),
        CoalescePolicy::Polars {
            chunk_size_bytes,
            min_gap_bytes,
            max_gap_bytes,
        } => presets::polars(needed, chunk_size_bytes, min_gap_bytes, max_gap_bytes),
    })
}
