//! Every bound on what the simulator reads from outside (scenarios, layouts, Iceberg metadata,
//! traces, command lines), named once, in the manner of TigerBeetle's `constants.zig`.
//!
//! A value past a bound is refused with an error that names the field, the value, the bound
//! and why the bound exists (the reason is the constant's doc comment, repeated in
//! `docs/bounds.md`, which a test keeps in step with this file). The bounds are far above any
//! real table or experiment the project knows of; they exist so that a small hostile input
//! (a 249-byte layout stating 10^12 rows) cannot make unbounded work or memory.
//!
//! This crate has no dependencies, so that every crate, the read path included, can use it.

/// Objects (data files) in one table. Iceberg tables with millions of files exist; 16.7 M is
/// far above the largest the project has seen and keeps a table's per-file arrays addressable
/// with `u32` and in memory (a recorded file costs about 100 bytes before its chunks).
pub const MAX_FILES_PER_TABLE: u64 = 1 << 24;

/// Bytes in one object: 5 TiB, S3's maximum object size (a single PUT or multipart upload).
pub const MAX_OBJECT_BYTES: u64 = 5 << 40;

/// Row groups in one Parquet file: writers roll a file long before this (a 5 TiB object with
/// row groups of 5 MiB has one million).
pub const MAX_ROW_GROUPS_PER_FILE: u64 = 1 << 20;

/// Columns in one schema. The widest tables the project knows of have tens of thousands of
/// leaf columns; the planner keeps per-column arrays per row group.
pub const MAX_COLUMNS_PER_SCHEMA: u64 = 1 << 16;

/// Rows in one row group: 4.3 billion. Writers cut row groups by bytes (128 MiB..1 GiB) or rows
/// (DuckDB 122,880, ClickHouse 1 M); 2^32 rows also keeps ClickHouse's row subgroups of a row
/// group (65,409 rows at most) near 65 thousand.
pub const MAX_ROWS_PER_ROW_GROUP: u64 = 1 << 32;

/// Uncompressed bytes of one column chunk: 1 TiB. A decoder holds a chunk's pages one at a
/// time, but the planner sizes row subgroups by uncompressed bytes (16,744,704 a subgroup).
pub const MAX_UNCOMPRESSED_BYTES_PER_CHUNK: u64 = 1 << 40;

/// Any sum over a whole table (rows, stored bytes, uncompressed bytes) stays at or below 2^60,
/// so that the read path's arithmetic on them (sums across files, products with small
/// factors such as thread counts or ratios in permille) cannot overflow `u64`.
pub const MAX_TABLE_TOTAL: u64 = 1 << 60;

/// ClickHouse row subgroups one query may plan, counted from the rows (65,409 a subgroup at
/// most) and uncompressed bytes (16,744,704 a subgroup) of the row groups it reads: about one
/// million. Each costs about 12 us of simulation (measured: 1.5 M subgroups in 19 s), so this
/// bounds one query to seconds.
pub const MAX_ROW_SUBGROUPS_PER_QUERY: u64 = 1 << 20;

/// Iceberg manifests one cold query reads (generated `manifest_count`, or recorded). The
/// IcebergBench finding reads about 32 a query; Iceberg's own guidance keeps tables to
/// thousands. Each manifest is one serial GET in the metadata phase.
pub const MAX_MANIFESTS_PER_QUERY: u64 = 1 << 20;

/// Column chunks a generated table may keep whole (files kept x row groups x columns), about
/// 8 GB of layout in memory at 80 bytes a chunk; the shipped many-small-files query keeps
/// 1.1 M. Past `scenario::KEEP_WHOLE_UP_TO_CHUNKS` a run keeps outlines instead, which hold no
/// chunk.
pub const MAX_GENERATED_COLUMN_CHUNKS: u64 = 100_000_000;

/// Column chunks one generated file may have (row groups x columns): a file is made whole,
/// kept or as an outline made again when a reader opens it, so this bounds what one file
/// holds (about 1.3 GB at 80 bytes a chunk), as `scenario::KEEP_WHOLE_UP_TO_CHUNKS` (the same
/// 16 M) bounds what a table keeps whole. The widest shipped file has 22,032.
pub const MAX_GENERATED_CHUNKS_PER_FILE: u64 = 1 << 24;

/// Pages a generated table may list (offset indexes), for the same reason as chunks.
pub const MAX_GENERATED_PAGES: u64 = 100_000_000;

/// Groups nested in a recorded file's schema (the root counts one). A schema is a flat list
/// whose nesting is in its elements' `num_children`; the `parquet` crate walks it recursively,
/// once a level.
pub const MAX_SCHEMA_DEPTH: u64 = 64;

/// Pages a recorded file's offset indexes may list (24 bytes each in memory: about 1.6 GB).
/// The recorder also refuses page indexes whose bytes add up past the file's size (indexes
/// that share bytes, which a 1.2 MB file used to list 1.4 G pages).
pub const MAX_RECORDED_PAGES_PER_FILE: u64 = 1 << 26;

/// Any size a generator draws from a distribution: 256 TiB.
pub const MAX_DRAWN_BYTES: u64 = 1 << 48;

/// Points on one axis of a sweep.
pub const MAX_POINTS_PER_AXIS: usize = 10_000;

/// Points of a sweep's grid (the product of its axes), each one run per arm and replication.
pub const MAX_GRID_POINTS: usize = 1_000_000;

/// Replications of a case, a sweep point or a tune evaluation.
pub const MAX_REPLICATIONS: u32 = 10_000;

/// Threads of any reader pool (streams, decode threads, IO threads): a node of the largest
/// instance types has 448 vCPUs, and each simulated thread costs memory and work.
pub const MAX_THREADS: u64 = 4096;

/// Virtual time one simulated run may reach, in nanoseconds (2^51 ns, about 26 days): far past
/// any read a scenario describes, and low enough that every time sum the driver and the reader
/// keep (a thread's busy time summed over up to [`MAX_THREADS`] threads) fits a `u64`. A run
/// whose next event lies past it (a CPU or store cost of hours a task) fails with an error; a
/// trace whose requests span more (first start to last start or end) is refused by the parser.
pub const MAX_VIRTUAL_TIME_NS: u64 = 1 << 51;

/// Bloom-filter probes of a query per row group and column (one per value of an `IN` list, each
/// hitting one 32-byte block): the planner draws each, so a count of billions held gigabytes.
pub const MAX_BLOOM_PROBES: u32 = 65_536;

/// Evaluations `sim tune --budget` may ask for.
pub const MAX_TUNE_BUDGET: usize = 100_000;

/// Bytes of one line of an access log or trace CSV: a real S3 access-log line is under 2 KiB.
pub const MAX_TRACE_LINE_BYTES: usize = 64 * 1024;

/// Nesting depth of Thrift structures read from a Parquet footer (the `parquet` crate's own
/// skip has no bound and spent 1.8 s on a 178-byte file).
pub const MAX_THRIFT_DEPTH: u32 = 32;

/// Bytes `apache-avro` may allocate for one value of a manifest list or manifest (its
/// `max_allocation_bytes`, 512 MiB by default): a manifest entry is a few KiB.
pub const MAX_AVRO_ALLOCATION_BYTES: usize = 64 << 20;

/// Bytes of a metadata JSON, manifest list or manifest file `sim record iceberg` reads.
pub const MAX_METADATA_FILE_BYTES: u64 = 1 << 30;

/// Records (requests, needed ranges and run lines) `sim fit` and `sim replay` hold from one
/// trace: a record takes about 750 bytes in memory (600,000 access-log lines took 453 MB), so
/// this keeps a trace under about 1.6 GB. A `sim run --trace` of `many-small-files` (3 arms)
/// holds 133,113; fit or replay a day of a busy bucket's access log in parts.
pub const MAX_TRACE_RECORDS: usize = 1 << 21;

/// Rows of the test bed's request-log CSV.
pub const MAX_REQUEST_LOG_ROWS: usize = 1_000_000;

/// Bytes of any line of a sweep CSV: its comment lines (the fingerprint lists every axis value:
/// 10,000 values of an axis are about 100 KiB) and its data rows, as `sim sweep merge`,
/// `--resume` and the plots read them.
pub const MAX_SWEEP_LINE_BYTES: usize = 16 << 20;

/// Bytes of one recorded min or max of a string or binary column. Writers truncate theirs to
/// 64 bytes (parquet-mr, arrow-rs) or keep them whole (pyarrow); a longer one is not recorded and
/// its chunk prunes nothing.
pub const MAX_STAT_VALUE_BYTES: usize = 1024;

/// Bytes of a query's `predicate:` text (a TPC-H predicate is under 200 bytes).
pub const MAX_PREDICATE_BYTES: usize = 64 * 1024;

/// Smallest unit a cache may track: the page cache's `page_cache_block_size` and the
/// filesystem cache's `boundary_alignment` (4 KiB, the operating system's page). A cache's work
/// and memory go as the bytes it covers over its unit: 1-byte blocks made a half-warm page cache
/// ask for 4 GB and abort, and a 1-byte alignment made a cold filesystem cache run for minutes.
pub const MIN_CACHE_BLOCK_BYTES: u64 = 4096;

/// Smallest non-zero `progress_chunk` of a store model: a reader hears of a GET's body every
/// this many bytes, an event each (4 KiB, a few TCP segments). A 1-byte chunk made a run of
/// `iceberg-bench` an event per byte (it ran past a minute where it takes 0.02 s; 4 KiB: 0.3 s).
pub const MIN_PROGRESS_CHUNK_BYTES: u64 = 4096;

/// Attempts a store model's client makes for one read (`retry.max_attempts`): ten times
/// ClickHouse's largest default (`backup_restore_s3_retry_attempts`, 1,000). Each attempt is
/// events; 4 billion attempts of 1 ns timeouts ran without end.
pub const MAX_ATTEMPTS_PER_READ: u64 = 10_000;

/// Hedges a store model's client sends for one read (`hedge.max_hedges`): hedging sends one or
/// two. 4 billion hedges 1 ns apart asked for 2.7 GB and aborted.
pub const MAX_HEDGES_PER_READ: u64 = 64;

/// Units a cache's warm state walks over the table's laid-out files (bytes over the page
/// cache's block or the filesystem cache's alignment), each warm one kept as an entry: a
/// filesystem cache 0.9 warm at 4 KiB over `fs-cache-cold`'s queried files (9.8 M units) took 2.2 GB.
pub const MAX_WARM_CACHE_UNITS: u64 = 1 << 22;

/// Every bound by name, for the test that keeps `docs/bounds.md` in step.
pub const ALL: &[(&str, u64)] = &[
    ("MAX_FILES_PER_TABLE", MAX_FILES_PER_TABLE),
    ("MAX_OBJECT_BYTES", MAX_OBJECT_BYTES),
    ("MAX_ROW_GROUPS_PER_FILE", MAX_ROW_GROUPS_PER_FILE),
    ("MAX_COLUMNS_PER_SCHEMA", MAX_COLUMNS_PER_SCHEMA),
    ("MAX_ROWS_PER_ROW_GROUP", MAX_ROWS_PER_ROW_GROUP),
    (
        "MAX_UNCOMPRESSED_BYTES_PER_CHUNK",
        MAX_UNCOMPRESSED_BYTES_PER_CHUNK,
    ),
    ("MAX_TABLE_TOTAL", MAX_TABLE_TOTAL),
    ("MAX_ROW_SUBGROUPS_PER_QUERY", MAX_ROW_SUBGROUPS_PER_QUERY),
    ("MAX_MANIFESTS_PER_QUERY", MAX_MANIFESTS_PER_QUERY),
    ("MAX_GENERATED_COLUMN_CHUNKS", MAX_GENERATED_COLUMN_CHUNKS),
    (
        "MAX_GENERATED_CHUNKS_PER_FILE",
        MAX_GENERATED_CHUNKS_PER_FILE,
    ),
    ("MAX_GENERATED_PAGES", MAX_GENERATED_PAGES),
    ("MAX_RECORDED_PAGES_PER_FILE", MAX_RECORDED_PAGES_PER_FILE),
    ("MAX_SCHEMA_DEPTH", MAX_SCHEMA_DEPTH),
    ("MIN_CACHE_BLOCK_BYTES", MIN_CACHE_BLOCK_BYTES),
    ("MIN_PROGRESS_CHUNK_BYTES", MIN_PROGRESS_CHUNK_BYTES),
    ("MAX_ATTEMPTS_PER_READ", MAX_ATTEMPTS_PER_READ),
    ("MAX_HEDGES_PER_READ", MAX_HEDGES_PER_READ),
    ("MAX_WARM_CACHE_UNITS", MAX_WARM_CACHE_UNITS),
    ("MAX_DRAWN_BYTES", MAX_DRAWN_BYTES),
    ("MAX_POINTS_PER_AXIS", MAX_POINTS_PER_AXIS as u64),
    ("MAX_GRID_POINTS", MAX_GRID_POINTS as u64),
    ("MAX_REPLICATIONS", MAX_REPLICATIONS as u64),
    ("MAX_THREADS", MAX_THREADS),
    ("MAX_VIRTUAL_TIME_NS", MAX_VIRTUAL_TIME_NS),
    ("MAX_BLOOM_PROBES", MAX_BLOOM_PROBES as u64),
    ("MAX_TUNE_BUDGET", MAX_TUNE_BUDGET as u64),
    ("MAX_TRACE_LINE_BYTES", MAX_TRACE_LINE_BYTES as u64),
    ("MAX_TRACE_RECORDS", MAX_TRACE_RECORDS as u64),
    ("MAX_THRIFT_DEPTH", MAX_THRIFT_DEPTH as u64),
    (
        "MAX_AVRO_ALLOCATION_BYTES",
        MAX_AVRO_ALLOCATION_BYTES as u64,
    ),
    ("MAX_METADATA_FILE_BYTES", MAX_METADATA_FILE_BYTES),
    ("MAX_REQUEST_LOG_ROWS", MAX_REQUEST_LOG_ROWS as u64),
    ("MAX_SWEEP_LINE_BYTES", MAX_SWEEP_LINE_BYTES as u64),
    ("MAX_STAT_VALUE_BYTES", MAX_STAT_VALUE_BYTES as u64),
    ("MAX_PREDICATE_BYTES", MAX_PREDICATE_BYTES as u64),
];

/// `value` as the narrower integer type `U`, for a value a bound of this crate already keeps in
/// range: an index into a validated table, a count of what a validated layout holds, a size below
/// [`MAX_OBJECT_BYTES`]. A value out of range is a broken invariant of the caller, not bad input,
/// so it panics naming the value and the type, where a bare `as` would wrap without a word.
#[track_caller]
#[inline]
pub fn narrow<T, U>(value: T) -> U
where
    T: Copy + std::fmt::Display,
    U: TryFrom<T>,
{
    match U::try_from(value) {
        Ok(narrowed) => narrowed,
        Err(_) => does_not_fit(value, std::any::type_name::<U>()),
    }
}

/// [`narrow`]'s panic, out of line so that the conversion inlines where it is called.
#[cold]
#[inline(never)]
#[track_caller]
fn does_not_fit(value: impl std::fmt::Display, type_name: &str) -> ! {
    panic!("{value} does not fit in {type_name}: a bound should have refused it where it entered")
}

/// A count or index held in a `usize` (a `Vec`'s length, a position in it) as a `u32`, for the
/// vectors a validated table bounds; see [`narrow`].
#[track_caller]
#[inline]
pub fn u32_of(n: usize) -> u32 {
    narrow(n)
}

/// A count or offset held in a `u64` as a `usize` index, for values already checked against a
/// buffer's length or a bound of this crate; see [`narrow`].
#[track_caller]
#[inline]
pub fn usize_of(n: u64) -> usize {
    narrow(n)
}

/// `x` rounded toward zero as a `u64`, saturating: NaN and negative values give 0, values above
/// `u64::MAX` give `u64::MAX` (what Rust's float-to-integer `as` is defined to do; named here so
/// a reader of the call sees that the clamp is meant).
#[inline]
pub fn saturating_u64(x: f64) -> u64 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let clamped = x as u64;
    clamped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_keeps_values_in_range() {
        let n: u32 = narrow(7usize);
        assert_eq!(n, 7);
        let m: u8 = narrow(255u64);
        assert_eq!(m, 255);
    }

    #[test]
    #[should_panic(expected = "does not fit in u32")]
    fn narrow_refuses_values_out_of_range() {
        let _: u32 = narrow(u64::from(u32::MAX) + 1);
    }

    #[test]
    fn saturating_u64_clamps() {
        assert_eq!(saturating_u64(f64::NAN), 0);
        assert_eq!(saturating_u64(-3.0), 0);
        assert_eq!(saturating_u64(2.9), 2);
        assert_eq!(saturating_u64(1e30), u64::MAX);
    }
}
