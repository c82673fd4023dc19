//! Strategies: a named preset (a bundle of settings and scheduling rules) plus overrides by
//! ClickHouse setting name. Every redesign mechanism R1..R10 (`docs/readpath.md` section 3) is a
//! switch of its own, so an ablation is "clickhouse-base plus one switch".

use coalescer::CoalescePolicy;
use readahead::{ControllerConfig, IoPoolSettings, MemorySettings};

use crate::error::StrategyError;
pub use crate::footer::{FooterRead, WholeFile};
use crate::settings::{Setting, Value, OBSOLETE, SETTINGS};

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
    /// arrow-rs `ParquetRecordBatchStream` over object_store (`parquet` 60.1.0, object_store
    /// 0.14.2): per row group one `get_byte_ranges` call, merged at 1 MiB and fetched at most 10
    /// at a time; the next row group is fetched only when asked for, files one after another.
    /// `docs/peers.md` gives the rules and where they were read.
    ArrowRs,
    /// Arrow C++ / pyarrow (the code read at apache-arrow 25.0.1; the reader checked is pyarrow
    /// 26.0.1, which bundles Arrow C++ 26.0.1 and has the same defaults: `docs/peers.md`;
    /// `cpp/src/arrow/io/caching.cc`):
    /// with `pre_buffer` one coalescing per file over its row groups (hole 8 KiB, range
    /// 32 MiB) on an IO pool of 8 threads, 4 files open at a time.
    ArrowCpp,
    /// DuckDB's Parquet reader (1.4.4 with httpfs @ `13f8a814`,
    /// `extension/parquet/parquet_reader.cpp`): one row group per thread, its read heads
    /// (merged within 16 KiB) read one after another.
    DuckDb,
    /// Velox's Parquet reader over `DirectBufferedInput` (facebookincubator/velox @ 4d16851,
    /// 2026-08: `velox/dwio/parquet/reader/ParquetReader.cpp`,
    /// `velox/dwio/common/DirectBufferedInput.cpp`): whole column chunks grouped per row group,
    /// loads issued one row group ahead (`prefetch-rowgroups`); the footer a 256 KiB tail, and
    /// a file of at most 8 MiB fetched whole for it.
    Velox,
    /// Trino's Parquet reader (476, `AbstractParquetDataSource.java`, `MetadataReader.java`):
    /// whole column chunks, synchronous reads on the split's thread; the footer a 48 KiB tail,
    /// read again whole when larger; files of at most 3 MiB read whole.
    Trino,
    /// parquet-java's vectored reads through Hadoop S3A (3.4.2 or later, whose defaults are
    /// HADOOP-19229's; `ParquetFileReader.internalReadRowGroup`, `VectoredReadUtils`), as
    /// Spark's Parquet reader uses them: adjacent chunks one range, those merged by S3A, up to
    /// 4 ranged reads per stream; the footer's length, then its metadata.
    HadoopS3a,
    /// Polars (2.1.0, `crates/polars-io/src/cloud/polars_object_store.rs`): `merge_ranges`
    /// then `split_range` into parts of about 8 MiB, under a pipeline budget of 64 MiB and a
    /// shared network budget of 32-64 MiB; footers of up to 16 files read at plan time.
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
    pub(crate) whole_file: WholeFile,
    /// The peer readers' own knobs (each peer reads the ones it has).
    pub(crate) peer: crate::peer::knobs::PeerKnobs,
}

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
            whole_file: WholeFile::Never,
            peer: crate::peer::knobs::PeerKnobs::defaults(),
        }
    }

    /// A peer's strategy: its merge rule, reads of a file at once and row groups ahead (the
    /// footer is ClickHouse's until the preset sets its reader's).
    fn peer(name: &str, family: Family, reads: u32, ahead: u32) -> Result<Strategy, StrategyError> {
        let mut s = Strategy::clickhouse(name);
        s.family = family;
        // No peer reads a page index on a scan: each reads whole column chunks.
        s.use_offset_index = false;
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
    /// - peers: their merge rule from the coalescer crate plus their scheduling (`docs/peers.md`).
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
            "arrow-rs" => Strategy::peer(name, Family::ArrowRs, 10, 0)?,
            "arrow-cpp" => Strategy::peer(name, Family::ArrowCpp, 0, 0)?,
            "duckdb" => Strategy::peer(name, Family::DuckDb, 0, 0)?,
            "velox" => {
                let mut s = Strategy::peer(name, Family::Velox, 0, 1)?;
                // `footer-speculative-io-size`, 256 KiB (`ParquetConfig.h`), and
                // `file-preload-threshold`, 8 MiB (`FileConfig::filePreloadThreshold`).
                s.footer = FooterRead::Tail(256 * KIB);
                s.whole_file = WholeFile::FooterOnly(8 * MIB);
                s
            }
            "trino" => {
                let mut s = Strategy::peer(name, Family::Trino, 1, 0)?;
                // `MetadataReader.EXPECTED_FOOTER_SIZE`, 48 KiB. Files of at most
                // `parquet.small-file-threshold` (`ParquetReaderOptions`,
                // `DataSize.of(3, MEGABYTE)`) are read whole: Airlift's MEGABYTE is 2^20 bytes
                // (as for the 1 MiB merge distance and 8 MiB buffer), so 3 MiB, not 3,000,000.
                s.footer = FooterRead::TailThenWhole(48 * KIB);
                s.whole_file = WholeFile::Served(3 * MIB);
                s
            }
            "hadoop-s3a" => {
                let mut s = Strategy::peer(name, Family::HadoopS3a, 4, 0)?;
                s.footer = FooterRead::LengthThenMetadata;
                s
            }
            "polars" => {
                let mut s = Strategy::peer(name, Family::Polars, 0, u32::MAX)?;
                s.peer.footer_read_bytes = 256 * KIB;
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

    /// Sets one setting from text with units (`"2MiB"`, `"8"`, `"0.35"`, `"true"`): the text
    /// is parsed by the setting's [`Kind`](crate::settings::Kind). An unknown key is an error
    /// that suggests the nearest key this preset honours; a key the preset does not honour is
    /// an error naming the preset; an out-of-domain value says what would be valid. A refused
    /// setting changes nothing.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), StrategyError> {
        let setting = self.honoured_setting(key)?;
        let v = setting
            .kind
            .parse(value)
            .map_err(|e| StrategyError::InvalidValue {
                key: key.into(),
                value: value.into(),
                why: e.why,
                expected: e.expected,
            })?;
        setting.set(self, v);
        Ok(())
    }

    /// Sets a setting to a value already parsed by its kind (sweep axes, tune parameters).
    pub fn set_value(&mut self, key: &str, value: Value) -> Result<(), StrategyError> {
        let setting = self.honoured_setting(key)?;
        setting.set(self, value);
        Ok(())
    }

    /// The registry entry of `key` if this strategy honours it, else why not.
    pub fn honoured_setting(&self, key: &str) -> Result<&'static Setting, StrategyError> {
        if let Some((_, instead)) = OBSOLETE.iter().find(|(k, _)| *k == key) {
            return Err(StrategyError::UnknownSetting {
                key: key.into(),
                suggestion: format!(" (obsolete since R4; use `{instead}`)"),
                preset: self.name.clone(),
            });
        }
        let Some(setting) = crate::settings::setting(key) else {
            let honoured = SETTINGS
                .iter()
                .filter(|s| s.honoured_by(self))
                .map(|s| s.name);
            return Err(StrategyError::UnknownSetting {
                key: key.into(),
                suggestion: suggest(key, honoured),
                preset: self.name.clone(),
            });
        };
        if !setting.honoured_by(self) {
            return Err(StrategyError::NotHonoured {
                key: key.into(),
                preset: self.name.clone(),
                honoured: self.honoured_names().join(", "),
            });
        }
        Ok(setting)
    }

    /// Whether `key` does anything on this strategy (honoured, and its mechanism as needed).
    pub fn applies(&self, key: &str) -> bool {
        crate::settings::setting(key).is_some_and(|s| s.applies_to(self))
    }

    /// Whether this strategy honours `key`.
    pub fn honours(&self, key: &str) -> bool {
        crate::settings::setting(key).is_some_and(|s| s.honoured_by(self))
    }

    /// Names of every setting this strategy honours, in listing order.
    pub fn honoured_names(&self) -> Vec<&'static str> {
        SETTINGS
            .iter()
            .filter(|s| s.honoured_by(self))
            .map(|s| s.name)
            .collect()
    }

    /// Every setting this strategy honours with its current value, in listing order.
    pub fn settings(&self) -> Vec<(&'static Setting, Value)> {
        SETTINGS
            .iter()
            .filter(|s| s.honoured_by(self))
            .map(|s| (s, s.get(self)))
            .collect()
    }

    /// The value of `key`, if this strategy honours it.
    pub fn value(&self, key: &str) -> Option<Value> {
        crate::settings::setting(key)
            .filter(|s| s.honoured_by(self))
            .map(|s| s.get(self))
    }

    /// Whether each column chunk is read as one range with its dictionary and no page index
    /// (every peer; ClickHouse addresses pages and dictionaries through the offset index).
    pub fn reads_whole_chunks(&self) -> bool {
        self.family != Family::ClickHouse
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

    /// `max_parsing_threads`: the parsing pool's size.
    pub fn max_parsing_threads(&self) -> u32 {
        self.max_parsing_threads
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
    fn every_preset_builds_and_lists_what_it_honours() {
        for name in STRATEGY_PRESETS {
            let s = Strategy::preset(name).unwrap();
            let settings = s.settings();
            assert!(!settings.is_empty(), "{name}");
            for (setting, _) in settings {
                assert!(setting.honoured_by(&s), "{name}: {}", setting.name);
            }
        }
    }

    #[test]
    fn every_listed_setting_round_trips_through_set() {
        for name in STRATEGY_PRESETS {
            let mut s = Strategy::preset(name).unwrap();
            for (setting, v) in s.settings() {
                s.set(setting.name, &v.text())
                    .unwrap_or_else(|e| panic!("{name}: {} = {}: {e}", setting.name, v.text()));
            }
            // Compared by the values the settings show: a default derived from other settings
            // (Polars' budget from its threads) becomes an explicit value when set.
            let shown = |s: &Strategy| -> Vec<String> {
                s.settings()
                    .into_iter()
                    .map(|(k, v)| format!("{} = {}", k.name, v.text()))
                    .collect()
            };
            assert_eq!(shown(&s), shown(&Strategy::preset(name).unwrap()), "{name}");
        }
    }

    #[test]
    fn a_setting_the_preset_does_not_honour_is_refused_by_name() {
        let mut d = Strategy::preset("duckdb").unwrap();
        let e = d
            .set("input_format_parquet_coalesce_gap_bytes", "1MiB")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a setting of duckdb"), "{e}");
        assert!(e.contains("allow_gap"), "says what it honours: {e}");
        assert_eq!(d, Strategy::preset("duckdb").unwrap());
        let mut c = Strategy::preset("clickhouse-redesign").unwrap();
        assert!(c.set("hole_size_limit", "1MiB").is_err());
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
