//! Coalescing: sorted needed byte ranges (plus which gap bytes the source already caches) in,
//! read tasks (one ranged GET each) out, under one of several readers' merge rules.
//!
//! This is a pure library: no IO, no clock, no threads. [`coalesce`] is the batch entry point
//! for every preset; [`LazyCoalescer`] is ClickHouse base's lazy, first-use coalescing. Every
//! [`ReadTask`] lists the needed pieces it serves and where they sit inside it, in offset
//! order, so that partial readiness can serve them as bytes arrive.
//!
//! Invariants (property-tested): every needed byte is served by exactly one task; tasks never
//! overlap; no task bridges an uncached gap larger than
//! [`CoalescePolicy::max_bridged_gap_bytes`]; under the redesign every task wastes at most the
//! floor or stays within the amplification ratio. Cost is linear in the number of ranges.
//!
//! ```
//! use coalescer::{coalesce, CoalescePolicy, NeededRange, NothingCached};
//! use layout::ByteRange;
//!
//! // Two wanted columns 3.4 MB apart in one row group.
//! let needed = [
//!     NeededRange::new(ByteRange::new(0, 25_000)),
//!     NeededRange::new(ByteRange::new(3_425_000, 3_425_640)),
//! ];
//! let base = CoalescePolicy::preset("clickhouse-base")?;
//! let redesign = CoalescePolicy::preset("clickhouse-redesign")?;
//! assert_eq!(coalesce(&needed, &NothingCached, &base)?.len(), 1); // one 3.4 MB read
//! let tasks = coalesce(&needed, &NothingCached, &redesign)?;
//! assert_eq!(tasks.len(), 2); // two small reads
//! // Each task says which needed ranges it serves and where they sit inside it.
//! assert_eq!((tasks[1].serves[0].needed, tasks[1].serves[0].task_offset), (1, 0));
//! # Ok::<(), coalescer::CoalesceError>(())
//! ```
// Casts that could truncate are checked (`limits::narrow`) or say why they cannot.
#![warn(clippy::cast_possible_truncation)]
// Tests build their fixtures with plain casts; the library target above is what is checked.
#![cfg_attr(test, allow(clippy::cast_possible_truncation))]

mod build;
mod coalesce;
mod error;
mod formulas;
mod input;
mod lazy;
mod policy;
mod presets;
mod serde_units;
mod types;

pub use coalesce::coalesce;
pub use error::CoalesceError;
pub use formulas::{
    arrow_cpp_from_network_metrics, duckdb_fitted_gap, try_arrow_cpp_from_network_metrics,
    try_duckdb_fitted_gap,
};
pub use lazy::LazyCoalescer;
pub use policy::{CoalescePolicy, PRESET_NAMES};
pub use types::{CachedBytes, NeededRange, NothingCached, ReadTask, Served, WHOLE_RANGES};
