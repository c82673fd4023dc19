//! Strategies: a named preset (a bundle of settings and scheduling rules) plus overrides by
//! ClickHouse setting name. Every redesign mechanism R1..R10 (READPATH.md section 3) is a
//! switch of its own, so an ablation is "clickhouse-base plus one switch".

use coalescer::CoalescePolicy;
use readahead::{ControllerConfig, IoPoolSettings, MemorySettings};

use crate::error::StrategyError;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// Every preset [`Strategy::preset`] accepts.
pub const STRATEGY_PRESETS: &[&str] = &[
    "clickhouse-base",
    "clickhouse-redesign",
    "arrow-rs",
    "arrow-cpp",
    "duckdb",
    "velox",
    "trino",
    "hadoop-s3a",
    "polars",
];

/// Which reader's scheduling rules a strategy follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// ClickHouse's Parquet v3 reader; base or redesign by the R switches.
    ClickHouse,
    /// arrow-rs `ParquetRecordBatchStream` over object_store (arrow-rs 55, object_store 0.12):
    /// per row group one `get_ranges` call, whose merged reads run up to 10 at once
    /// (`OBJECT_STORE_COALESCE_PARALLEL`); the next row group is fetched only when asked for.
    ArrowRs,
    /// Arrow C++ `ReadRangeCache` (Arrow 20, `cpp/src/arrow/io/caching.cc`), lazy mode:
    /// ranges of a row group are coalesced and fetched on first use on an IO pool of 8 threads.
    ArrowCpp,
    /// DuckDB's Parquet reader (1.3, `extension/parquet/parquet_reader.cpp`): the read heads of
    /// a row group are prefetched together, one read per head.
    DuckDb,
    /// Velox `DirectBufferedInput` (2025, `velox/dwio/common/DirectBufferedInput.cpp`): loads
    /// are issued one row group ahead of the reader.
    Velox,
    /// Trino's Parquet reader (476, `AbstractParquetDataSource.java`): synchronous reads on the
    /// split's thread; files under 3 MB read whole.
    Trino,
    /// Hadoop S3A vectored IO (3.4, `VectoredReadUtils`), as Spark's Parquet reader uses it:
    /// up to 4 ranged reads per stream.
    HadoopS3a,
    /// Polars (1.30, `crates/polars-io/src/cloud/polars_object_store.rs`): reads issued while a
    /// bytes-in-flight budget of about bandwidth x first-byte time holds.
    Polars,
}

/// Where the files live; picks the `min_bytes_for_seek` default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// Object storage (S3, GCS, HTTP): `remote_read_min_bytes_for_seek`.
    Remote,
    /// A local file: `input_format_parquet_local_file_min_bytes_for_seek`.
    Local,
}

/// How a reader fetches a file's footer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FooterRead {
    /// One tail read of `min(file, n)` bytes; a second serial read when the footer is larger.
    Tail(u64),
    /// DuckDB: a tail of `clamp(size / 1000, 16 KiB, 256 KiB)`.
    DuckDb,
    /// arrow-rs without a size hint: the 8-byte tail, then the footer.
    ArrowRs,
}

/// A strategy: a preset's settings and rules, with overrides applied by [`Strategy::set`].
#[derive(Clone, Debug, PartialEq)]
pub struct Strategy {
    pub(crate) name: String,
    pub(crate) family: Family,
    pub(crate) storage: Storage,
    pub(crate) max_threads: u32,
    pub(crate) max_parsing_threads: u32,
    pub(crate) max_download_threads: u32,
    pub(crate) max_io_threads: u32,
    pub(crate) remote_read_min_bytes_for_seek: u64,
    pub(crate) local_file_min_bytes_for_seek: u64,
    pub(crate) coalesce_gap_bytes: u64,
    pub(crate) max_read_amplification: f64,
    pub(crate) read_amplification_floor_bytes: u64,
    pub(crate) bytes_per_read_task: u64,
    pub(crate) min_bytes_in_flight: u64,
    pub(crate) memory_high_watermark: u64,
    pub(crate) memory_low_watermark: u64,
    pub(crate) compressed_memory_fraction: f64,
    pub(crate) files_prefetch_ahead: u32,
    pub(crate) parallel_subgroups: u32,
    pub(crate) use_offset_index: bool,
    pub(crate) row_group_buckets: bool,
    pub(crate) row_group_buckets_min_row_groups: u32,
    /// R1..R10, index 0 = R1.
    pub(crate) r: [bool; 10],
    /// Peers: their merge rule (ClickHouse derives it from the settings).
    pub(crate) peer_policy: Option<CoalescePolicy>,
    pub(crate) max_concurrent_reads_per_file: u32,
    pub(crate) row_groups_ahead: u32,
    pub(crate) footer: FooterRead,
    pub(crate) read_whole_file_below_bytes: u64,
}

/// Names of the mechanism switches (settings of [`Strategy::set`]), index 0 = R1.
pub const R_NAMES: [&str; 10] = [
    "r1_partial_readiness",
    "r2_bounded_coalescing",
    "r3_filesystem_cache_fixes",
    "r4_memory_by_lifetime",
    "r5_issue_queue",
    "r6_io_pool_from_query",
    "r7_in_flight_means_being_read",
    "r8_read_through_cached",
    "r9_files_prefetch",
    "r10_parallel_subgroups",
];

/// Every key [`Strategy::set`] accepts, with its one-line doc, in listing order.
const SETTINGS: &[(&str, &str)] = &[
    ("storage", "remote | local: picks min_bytes_for_seek (remote_read_min_bytes_for_seek or the local one)"),
    ("max_threads", "streams (pipeline sources) reading the query's files in parallel"),
    ("max_parsing_threads", "decode threads shared by all streams"),
    ("max_download_threads", "IO pool size of the base reader (ClickHouse default 4)"),
    ("input_format_parquet_max_io_threads", "IO pool size when set; 0 = derive (max_download_threads, or R6's rule)"),
    ("remote_read_min_bytes_for_seek", "remote storage: a gap shorter than this is read rather than seeked over (4 MiB)"),
    ("input_format_parquet_local_file_min_bytes_for_seek", "local files: the same seek threshold (8 KiB)"),
    ("input_format_parquet_coalesce_gap_bytes", "R2: largest gap bridged; the effective gap is min(this, min_bytes_for_seek)"),
    ("input_format_parquet_max_read_amplification", "R2: bound on read bytes / needed bytes per read (0 = none, else >= 1)"),
    ("input_format_parquet_read_amplification_floor_bytes", "R2: the ratio bound applies only to reads wasting more than this (0 = ratio alone)"),
    ("input_format_parquet_bytes_per_read_task", "cap on one read task's span; 0 = 4 x min_bytes_for_seek"),
    ("input_format_parquet_min_bytes_in_flight", "R5: floor of the bytes-in-flight target; 0 disables planning (base issue order)"),
    ("input_format_parquet_memory_high_watermark", "memory budget of the reader (base: five stages of 0.2 each; R4: three pools)"),
    ("input_format_parquet_memory_low_watermark", "base: a charge smaller than this is always admitted"),
    ("input_format_parquet_compressed_memory_fraction", "R4: share of the high watermark for compressed pages in flight"),
    ("input_format_parquet_files_prefetch_ahead", "R9: files each stream pre-opens (footer and index reads) ahead of the current one"),
    ("input_format_parquet_parallel_subgroups", "R10: subgroups of one row group decoding at once"),
    ("input_format_parquet_use_offset_index", "read offset indexes and only the pages holding wanted rows"),
    ("row_group_buckets", "split each file's row groups into about max_threads buckets, one source each (READPATH section 4)"),
    ("row_group_buckets_min_row_groups", "the fewest row groups a bucket holds"),
    ("r1_partial_readiness", "R1: serve a range as soon as the bytes before its end arrived"),
    ("r2_bounded_coalescing", "R2: gap rule plus amplification bound instead of lazy 4 MiB bridging"),
    ("r3_filesystem_cache_fixes", "R3: the filesystem cache honours per-query alignment and background download"),
    ("r4_memory_by_lifetime", "R4: Metadata / Compressed / Decoded pools; delivered chunks charged"),
    ("r5_issue_queue", "R5: per-file issue queue bounded by a fitted bytes-in-flight target"),
    ("r6_io_pool_from_query", "R6: IO pool = max(max_download_threads, min(max_parsing_threads, 16))"),
    ("r7_in_flight_means_being_read", "R7: only reads running on an IO thread count as in flight"),
    ("r8_read_through_cached", "R8: coalesce through gaps the page cache already holds"),
    ("r9_files_prefetch", "R9: pre-open the next files of each stream"),
    ("r10_parallel_subgroups", "R10: decode several subgroups of a row group at once"),
    ("max_concurrent_reads_per_file", "coupled issue: reads of one file running at once, 0 = unlimited (ClickHouse base 1, arrow-rs 10, hadoop-s3a 4, trino 1); R5 ignores it"),
    ("row_groups_ahead", "row groups fetched ahead of the first unfinished one; `unlimited` = memory decides"),
    ("footer_tail_bytes", "bytes of the footer tail read; 0 = the reader's own rule (DuckDB, arrow-rs)"),
    ("read_whole_file_below_bytes", "files smaller than this are read whole in one request (Trino 3 MB); 0 = never"),
];

/// Obsolete keys and what replaced them.
const OBSOLETE: &[(&str, &str)] = &[(
    "input_format_parquet_prefetch_memory_fraction",
    "input_format_parquet_compressed_memory_fraction",
)];

impl Strategy {
    fn clickhouse(name: &str) -> Strategy {
        Strategy {
            name: name.to_owned(),
            family: Family::ClickHouse,
            storage: Storage::Remote,
            max_threads: 16,
            max_parsing_threads: 16,
            max_download_threads: 4,
            max_io_threads: 0,
            remote_read_min_bytes_for_seek: 4 * MIB,
            local_file_min_bytes_for_seek: 8 * KIB,
            coalesce_gap_bytes: 2 * MIB,
            max_read_amplification: 8.0,
            read_amplification_floor_bytes: 256 * KIB,
            bytes_per_read_task: 0,
            min_bytes_in_flight: 64 * MIB,
            memory_high_watermark: readahead::memory::DEFAULT_MEMORY_HIGH_WATERMARK,
            memory_low_watermark: readahead::memory::DEFAULT_MEMORY_LOW_WATERMARK,
            compressed_memory_fraction: readahead::memory::DEFAULT_COMPRESSED_MEMORY_FRACTION,
            files_prefetch_ahead: 2,
            parallel_subgroups: 2,
            use_offset_index: true,
            row_group_buckets: false,
            row_group_buckets_min_row_groups: 1,
            r: [false; 10],
            peer_policy: None,
            // A base decode thread fetches the tasks it needs one after another.
            max_concurrent_reads_per_file: 1,
            row_groups_ahead: u32::MAX,
            footer: FooterRead::Tail(64 * KIB),
            read_whole_file_below_bytes: 0,
        }
    }

    fn peer(
        name: &str,
        family: Family,
        reads: u32,
        ahead: u32,
        footer: FooterRead,
    ) -> Result<Strategy, StrategyError> {
        let mut s = Strategy::clickhouse(name);
        s.family = family;
        s.peer_policy =
            Some(
                CoalescePolicy::preset(name).map_err(|e| StrategyError::UnknownPreset {
                    name: name.into(),
                    suggestion: String::new(),
                    known: e.to_string(),
                })?,
            );
        s.max_concurrent_reads_per_file = reads;
        s.row_groups_ahead = ahead;
        s.footer = footer;
        Ok(s)
    }

    /// The named preset (see [`STRATEGY_PRESETS`]). Each preset's rules are documented on
    /// [`Family`] with the source they follow.
    ///
    /// - `clickhouse-base`: lazy 4 MiB coalescing, whole-task readiness, issue coupled to
    ///   admission (one step of a file at a time), IO pool 4 with inline reads, five stage
    ///   budgets; R1..R10 off.
    /// - `clickhouse-redesign`: the measured change, R1..R8 on (R9, R10 were designed but not
    ///   measured, so they stay off).
    /// - peers: their merge rule from the coalescer crate plus their scheduling (PEERS.md).
    pub fn preset(name: &str) -> Result<Strategy, StrategyError> {
        Ok(match name {
            "clickhouse-base" => Strategy::clickhouse(name),
            "clickhouse-redesign" => {
                let mut s = Strategy::clickhouse(name);
                for r in s.r.iter_mut().take(8) {
                    *r = true;
                }
                s
            }
            "arrow-rs" => Strategy::peer(name, Family::ArrowRs, 10, 0, FooterRead::ArrowRs)?,
            "arrow-cpp" => {
                let mut s =
                    Strategy::peer(name, Family::ArrowCpp, 0, 0, FooterRead::Tail(64 * KIB))?;
                s.max_io_threads = 8;
                s
            }
            "duckdb" => Strategy::peer(name, Family::DuckDb, 0, 0, FooterRead::DuckDb)?,
            "velox" => Strategy::peer(name, Family::Velox, 0, 1, FooterRead::Tail(64 * KIB))?,
            "trino" => {
                let mut s = Strategy::peer(name, Family::Trino, 1, 0, FooterRead::Tail(48 * KIB))?;
                // `parquet.max-read-block-size`-independent rule: files under 3 MB read whole.
                s.read_whole_file_below_bytes = 3_000_000;
                s
            }
            "hadoop-s3a" => {
                Strategy::peer(name, Family::HadoopS3a, 4, 0, FooterRead::Tail(64 * KIB))?
            }
            "polars" => {
                let mut s = Strategy::peer(
                    name,
                    Family::Polars,
                    0,
                    u32::MAX,
                    FooterRead::Tail(64 * KIB),
                )?;
                // The budget is the fit alone: a token floor, and 4 x 1 MiB under it.
                s.min_bytes_in_flight = 1;
                s.bytes_per_read_task = MIB;
                s
            }
            _ => {
                return Err(StrategyError::UnknownPreset {
                    name: name.to_owned(),
                    suggestion: suggest(name, STRATEGY_PRESETS.iter().copied()),
                    known: STRATEGY_PRESETS.join(", "),
                })
            }
        })
    }

    /// The preset's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The family whose scheduling rules apply.
    pub fn family(&self) -> Family {
        self.family
    }

    /// Sets one setting from text with units (`"2MiB"`, `"8"`, `"0.35"`, `"true"`). An unknown
    /// key is an error that suggests the nearest known key; an out-of-domain value is an error
    /// that says what would be valid.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), StrategyError> {
        if let Some((_, instead)) = OBSOLETE.iter().find(|(k, _)| *k == key) {
            return Err(StrategyError::UnknownSetting {
                key: key.into(),
                suggestion: format!(" (obsolete since R4; use `{instead}`)"),
            });
        }
        if let Some(i) = R_NAMES.iter().position(|n| *n == key) {
            let v = parse_bool(key, value)?;
            if let Some(slot) = self.r.get_mut(i) {
                *slot = v;
            }
            return Ok(());
        }
        let v = value.trim();
        match key {
            "storage" => {
                self.storage = match v {
                    "remote" => Storage::Remote,
                    "local" => Storage::Local,
                    _ => {
                        return Err(invalid(
                            key,
                            value,
                            "not a storage kind".into(),
                            "`remote` or `local`",
                        ))
                    }
                }
            }
            "max_threads" => self.max_threads = parse_threads(key, value, false)?,
            "max_parsing_threads" => self.max_parsing_threads = parse_threads(key, value, false)?,
            "max_download_threads" => self.max_download_threads = parse_threads(key, value, false)?,
            "input_format_parquet_max_io_threads" => {
                self.max_io_threads = parse_threads(key, value, true)?
            }
            "remote_read_min_bytes_for_seek" => {
                self.remote_read_min_bytes_for_seek = parse_size(key, value)?
            }
            "input_format_parquet_local_file_min_bytes_for_seek" => {
                self.local_file_min_bytes_for_seek = parse_size(key, value)?
            }
            "input_format_parquet_coalesce_gap_bytes" => {
                self.coalesce_gap_bytes = parse_size(key, value)?
            }
            "input_format_parquet_max_read_amplification" => {
                let ratio = parse_f64(key, value)?;
                if !ratio.is_finite() || (ratio != 0.0 && ratio < 1.0) {
                    return Err(invalid(
                        key,
                        value,
                        "a ratio of read bytes to needed bytes below 1 is impossible".into(),
                        "0 (no bound) or a ratio >= 1, e.g. 8",
                    ));
                }
                self.max_read_amplification = ratio;
            }
            "input_format_parquet_read_amplification_floor_bytes" => {
                self.read_amplification_floor_bytes = parse_size(key, value)?
            }
            "input_format_parquet_bytes_per_read_task" => {
                self.bytes_per_read_task = parse_size(key, value)?
            }
            "input_format_parquet_min_bytes_in_flight" => {
                self.min_bytes_in_flight = parse_size(key, value)?
            }
            "input_format_parquet_memory_high_watermark" => {
                let b = parse_size(key, value)?;
                if b == 0 {
                    return Err(invalid(
                        key,
                        value,
                        "no memory at all".into(),
                        "a size > 0, e.g. 4GiB",
                    ));
                }
                self.memory_high_watermark = b;
            }
            "input_format_parquet_memory_low_watermark" => {
                self.memory_low_watermark = parse_size(key, value)?
            }
            "input_format_parquet_compressed_memory_fraction" => {
                let f = parse_f64(key, value)?;
                if !(0.0..0.95).contains(&f) {
                    return Err(invalid(
                        key,
                        value,
                        "outside the room the Metadata pool (0.05) leaves".into(),
                        "a fraction from 0 up to (not including) 0.95, e.g. 0.35",
                    ));
                }
                self.compressed_memory_fraction = f;
            }
            "input_format_parquet_files_prefetch_ahead" => {
                self.files_prefetch_ahead = parse_u32(key, value)?
            }
            "input_format_parquet_parallel_subgroups" => {
                self.parallel_subgroups = parse_threads(key, value, false)?
            }
            "input_format_parquet_use_offset_index" => {
                self.use_offset_index = parse_bool(key, value)?
            }
            "row_group_buckets" => self.row_group_buckets = parse_bool(key, value)?,
            "row_group_buckets_min_row_groups" => {
                self.row_group_buckets_min_row_groups = parse_threads(key, value, false)?
            }
            "max_concurrent_reads_per_file" => {
                self.max_concurrent_reads_per_file = parse_u32(key, value)?
            }
            "row_groups_ahead" => {
                self.row_groups_ahead = if v == "unlimited" {
                    u32::MAX
                } else {
                    parse_u32(key, value)?
                }
            }
            "footer_tail_bytes" => {
                let b = parse_size(key, value)?;
                if b > 0 && b < 8 {
                    return Err(invalid(
                        key,
                        value,
                        "shorter than the 8-byte length and magic".into(),
                        "0 or at least 8B",
                    ));
                }
                if b > 0 {
                    self.footer = FooterRead::Tail(b);
                }
            }
            "read_whole_file_below_bytes" => {
                self.read_whole_file_below_bytes = parse_size(key, value)?
            }
            _ => {
                // A peer's own merge-rule parameters (e.g. arrow-cpp's `hole_size_limit`) are
                // set on its coalescing policy.
                if let Some(policy) = &mut self.peer_policy {
                    if policy.setting_names().contains(&key) {
                        return policy.set(key, value).map_err(|e| {
                            invalid(
                                key,
                                value,
                                e.to_string(),
                                "a value the reader's merge rule accepts",
                            )
                        });
                    }
                }
                let known = SETTINGS
                    .iter()
                    .map(|(k, _)| *k)
                    .chain(self.peer_policy.iter().flat_map(|p| p.setting_names()));
                return Err(StrategyError::UnknownSetting {
                    key: key.into(),
                    suggestion: suggest(key, known),
                });
            }
        }
        Ok(())
    }

    /// Every setting with its current value (with units) and a one-line doc, in a fixed order.
    pub fn settings(&self) -> Vec<(&'static str, String, &'static str)> {
        SETTINGS
            .iter()
            .map(|(k, doc)| (*k, self.value_of(k), *doc))
            .collect()
    }

    fn value_of(&self, key: &str) -> String {
        let b = units::format_bytes;
        if let Some(i) = R_NAMES.iter().position(|n| *n == key) {
            return self.r.get(i).copied().unwrap_or(false).to_string();
        }
        match key {
            "storage" => match self.storage {
                Storage::Remote => "remote".into(),
                Storage::Local => "local".into(),
            },
            "max_threads" => self.max_threads.to_string(),
            "max_parsing_threads" => self.max_parsing_threads.to_string(),
            "max_download_threads" => self.max_download_threads.to_string(),
            "input_format_parquet_max_io_threads" => self.max_io_threads.to_string(),
            "remote_read_min_bytes_for_seek" => b(self.remote_read_min_bytes_for_seek),
            "input_format_parquet_local_file_min_bytes_for_seek" => {
                b(self.local_file_min_bytes_for_seek)
            }
            "input_format_parquet_coalesce_gap_bytes" => b(self.coalesce_gap_bytes),
            "input_format_parquet_max_read_amplification" => {
                self.max_read_amplification.to_string()
            }
            "input_format_parquet_read_amplification_floor_bytes" => {
                b(self.read_amplification_floor_bytes)
            }
            "input_format_parquet_bytes_per_read_task" => b(self.bytes_per_read_task),
            "input_format_parquet_min_bytes_in_flight" => b(self.min_bytes_in_flight),
            "input_format_parquet_memory_high_watermark" => b(self.memory_high_watermark),
            "input_format_parquet_memory_low_watermark" => b(self.memory_low_watermark),
            "input_format_parquet_compressed_memory_fraction" => {
                self.compressed_memory_fraction.to_string()
            }
            "input_format_parquet_files_prefetch_ahead" => self.files_prefetch_ahead.to_string(),
            "input_format_parquet_parallel_subgroups" => self.parallel_subgroups.to_string(),
            "input_format_parquet_use_offset_index" => self.use_offset_index.to_string(),
            "row_group_buckets" => self.row_group_buckets.to_string(),
            "row_group_buckets_min_row_groups" => self.row_group_buckets_min_row_groups.to_string(),
            "max_concurrent_reads_per_file" => self.max_concurrent_reads_per_file.to_string(),
            "row_groups_ahead" if self.row_groups_ahead == u32::MAX => "unlimited".into(),
            "row_groups_ahead" => self.row_groups_ahead.to_string(),
            "footer_tail_bytes" => match self.footer {
                FooterRead::Tail(n) => b(n),
                FooterRead::DuckDb | FooterRead::ArrowRs => "0".into(),
            },
            "read_whole_file_below_bytes" => b(self.read_whole_file_below_bytes),
            _ => String::new(),
        }
    }

    /// Whether mechanism `Rn` (1..=10) is on.
    pub fn mechanism(&self, n: usize) -> bool {
        n.checked_sub(1)
            .and_then(|i| self.r.get(i))
            .copied()
            .unwrap_or(false)
    }

    /// R3: the driver's filesystem cache should honour per-query alignment and background
    /// download settings.
    pub fn filesystem_cache_fixes(&self) -> bool {
        self.mechanism(3)
    }

    /// R8: the page cache may read through short islands of cached blocks.
    pub fn read_through_page_cache(&self) -> bool {
        self.mechanism(8)
    }

    /// `min_bytes_for_seek` for the strategy's storage.
    pub fn min_bytes_for_seek(&self) -> u64 {
        match self.storage {
            Storage::Remote => self.remote_read_min_bytes_for_seek,
            Storage::Local => self.local_file_min_bytes_for_seek,
        }
    }

    /// `bytes_per_read_task`, 0 resolved to 4 x `min_bytes_for_seek` (at least 1 byte).
    pub fn resolved_bytes_per_read_task(&self) -> u64 {
        let b = if self.bytes_per_read_task == 0 {
            self.min_bytes_for_seek().saturating_mul(4)
        } else {
            self.bytes_per_read_task
        };
        b.max(1)
    }

    /// The merge rule: a peer's own, or ClickHouse's (R2 picks the redesign's).
    pub fn coalesce_policy(&self) -> CoalescePolicy {
        if let Some(p) = &self.peer_policy {
            return p.clone();
        }
        if self.mechanism(2) {
            CoalescePolicy::ClickHouseRedesign {
                min_bytes_for_seek: self.min_bytes_for_seek(),
                coalesce_gap_bytes: self.coalesce_gap_bytes,
                max_read_amplification: self.max_read_amplification,
                read_amplification_floor_bytes: self.read_amplification_floor_bytes,
                bytes_per_read_task: self.bytes_per_read_task,
                read_through_cached: self.mechanism(8),
            }
        } else {
            CoalescePolicy::ClickHouseBase {
                min_bytes_for_seek: self.min_bytes_for_seek(),
                bytes_per_read_task: self.resolved_bytes_per_read_task(),
            }
        }
    }

    /// Whether reads go through the per-file issue queue under a bytes-in-flight target (R5
    /// with a non-zero floor, or Polars's budget); otherwise issue is coupled to admission.
    pub fn planned_issue(&self) -> bool {
        match self.family {
            Family::ClickHouse => self.mechanism(5) && self.min_bytes_in_flight > 0,
            Family::Polars => true,
            _ => false,
        }
    }

    /// IO pool settings (R6 for ClickHouse).
    pub fn io_pool_settings(&self) -> IoPoolSettings {
        IoPoolSettings {
            max_download_threads: self.max_download_threads,
            max_parsing_threads: self.max_parsing_threads,
            input_format_parquet_max_io_threads: self.max_io_threads,
            r6_io_pool_from_query: self.mechanism(6),
        }
    }

    /// The IO pool size. Peers without an explicit pool run their per-file read limit on every
    /// stream (or 4 reads per stream when unlimited): an assumption, stated so.
    pub fn io_threads(&self) -> u32 {
        if self.family != Family::ClickHouse && self.max_io_threads == 0 {
            let per_file = if self.max_concurrent_reads_per_file == 0 {
                4
            } else {
                self.max_concurrent_reads_per_file
            };
            return self.max_threads.saturating_mul(per_file).max(1);
        }
        readahead::io_pool_size(&self.io_pool_settings()).unwrap_or(1)
    }

    /// Memory model settings for `streams` streams.
    pub fn memory_settings(&self, streams: u32) -> MemorySettings {
        MemorySettings {
            input_format_parquet_memory_high_watermark: self.memory_high_watermark,
            input_format_parquet_memory_low_watermark: self.memory_low_watermark,
            input_format_parquet_compressed_memory_fraction: self.compressed_memory_fraction,
            max_parsing_threads: self.max_parsing_threads,
            streams,
            r4_memory_by_lifetime: self.mechanism(4),
        }
    }

    /// Controller settings. Polars's budget (bandwidth x first-byte time) is approximated by
    /// the controller's fit with one IO thread, i.e. 2 x BW x TTFB, floored at 4 read tasks.
    pub fn controller_config(&self) -> ControllerConfig {
        let planned = self.planned_issue();
        ControllerConfig {
            min_bytes_in_flight: if planned { self.min_bytes_in_flight } else { 0 },
            bytes_per_read_task: self.resolved_bytes_per_read_task(),
            io_threads: if self.family == Family::Polars {
                1
            } else {
                self.io_threads()
            },
            count_queued_bytes: !self.mechanism(7),
        }
    }
}

fn invalid(key: &str, value: &str, why: String, expected: &'static str) -> StrategyError {
    StrategyError::InvalidValue {
        key: key.into(),
        value: value.into(),
        why,
        expected,
    }
}

fn parse_size(key: &str, value: &str) -> Result<u64, StrategyError> {
    units::parse_bytes(value).map_err(|e| {
        invalid(
            key,
            value,
            e.to_string(),
            "a size with a unit, e.g. 2MiB or 256KiB",
        )
    })
}

fn parse_u32(key: &str, value: &str) -> Result<u32, StrategyError> {
    let n = units::parse_count(value)
        .map_err(|e| invalid(key, value, e.to_string(), "a whole number, e.g. 8"))?;
    u32::try_from(n)
        .map_err(|_| invalid(key, value, "too large".into(), "a whole number below 2^32"))
}

fn parse_threads(key: &str, value: &str, zero_ok: bool) -> Result<u32, StrategyError> {
    let n = parse_u32(key, value)?;
    if n == 0 && !zero_ok {
        return Err(invalid(
            key,
            value,
            "0 would leave nothing to run on".into(),
            "at least 1",
        ));
    }
    Ok(n)
}

fn parse_f64(key: &str, value: &str) -> Result<f64, StrategyError> {
    let v: f64 = value.trim().parse().map_err(|_| {
        invalid(
            key,
            value,
            "not a number".into(),
            "a decimal number, e.g. 0.35",
        )
    })?;
    if !v.is_finite() || v < 0.0 {
        return Err(invalid(
            key,
            value,
            "negative or not finite".into(),
            "a finite number >= 0",
        ));
    }
    Ok(v)
}

fn parse_bool(key: &str, value: &str) -> Result<bool, StrategyError> {
    match value.trim() {
        "true" | "1" | "on" | "yes" => Ok(true),
        "false" | "0" | "off" | "no" => Ok(false),
        _ => Err(invalid(key, value, "not a boolean".into(), "true or false")),
    }
}

/// ` (did you mean `x`?)` for the nearest candidate, or empty when none is close.
fn suggest<'a>(key: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    let best = candidates
        .map(|c| (strsim::normalized_damerau_levenshtein(key, c), c))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((score, c)) if score > 0.5 => format!(" (did you mean `{c}`?)"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_builds_and_documents_every_setting() {
        for name in STRATEGY_PRESETS {
            let s = Strategy::preset(name).unwrap();
            let settings = s.settings();
            assert_eq!(settings.len(), SETTINGS.len());
            for (k, v, doc) in settings {
                assert!(!doc.is_empty() && !v.is_empty(), "{name}: {k}");
            }
        }
    }

    #[test]
    fn every_listed_setting_round_trips_through_set() {
        let mut s = Strategy::preset("clickhouse-base").unwrap();
        let listed = s.settings();
        for (k, v, _) in listed {
            s.set(k, &v).unwrap_or_else(|e| panic!("{k} = {v}: {e}"));
        }
        assert_eq!(s, Strategy::preset("clickhouse-base").unwrap());
    }

    #[test]
    fn unknown_key_suggests_the_nearest() {
        let mut s = Strategy::preset("clickhouse-base").unwrap();
        let e = s
            .set("input_format_parquet_coalesce_gap_byte", "1MiB")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("did you mean `input_format_parquet_coalesce_gap_bytes`"),
            "{e}"
        );
        let e = Strategy::preset("arrow_rs").unwrap_err().to_string();
        assert!(e.contains("did you mean `arrow-rs`"), "{e}");
        let e = s
            .set("input_format_parquet_prefetch_memory_fraction", "0.5")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("input_format_parquet_compressed_memory_fraction"),
            "{e}"
        );
    }

    #[test]
    fn absurd_values_are_refused_with_what_would_be_right() {
        let mut s = Strategy::preset("clickhouse-redesign").unwrap();
        let cases = [
            ("input_format_parquet_max_read_amplification", "0.5", ">= 1"),
            (
                "input_format_parquet_compressed_memory_fraction",
                "-0.1",
                ">= 0",
            ),
            (
                "input_format_parquet_compressed_memory_fraction",
                "0.97",
                "0.95",
            ),
            ("max_threads", "0", "at least 1"),
            ("remote_read_min_bytes_for_seek", "4", "unit"),
            ("r1_partial_readiness", "maybe", "true or false"),
            ("storage", "tape", "remote"),
        ];
        for (k, v, hint) in cases {
            let e = s.set(k, v).unwrap_err().to_string();
            assert!(e.contains(hint), "{k}={v}: {e}");
        }
        assert_eq!(
            s,
            Strategy::preset("clickhouse-redesign").unwrap(),
            "a refused value changes nothing"
        );
    }

    #[test]
    fn switches_pick_the_machinery() {
        let base = Strategy::preset("clickhouse-base").unwrap();
        assert!(!base.planned_issue());
        assert!(matches!(
            base.coalesce_policy(),
            CoalescePolicy::ClickHouseBase { .. }
        ));
        assert_eq!(base.io_threads(), 4);
        let mut r = base.clone();
        r.set("r2_bounded_coalescing", "true").unwrap();
        assert!(matches!(
            r.coalesce_policy(),
            CoalescePolicy::ClickHouseRedesign { .. }
        ));
        r.set("r6_io_pool_from_query", "true").unwrap();
        assert_eq!(r.io_threads(), 16);
        r.set("r5_issue_queue", "true").unwrap();
        assert!(r.planned_issue());
        r.set("input_format_parquet_min_bytes_in_flight", "0")
            .unwrap();
        assert!(!r.planned_issue(), "floor 0 disables planning");
        let local = {
            let mut l = base.clone();
            l.set("storage", "local").unwrap();
            l
        };
        assert_eq!(local.min_bytes_for_seek(), 8 * KIB);
        assert_eq!(local.resolved_bytes_per_read_task(), 32 * KIB);
    }
}
