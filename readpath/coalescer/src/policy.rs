//! Coalescing policies: one enum variant per reader whose merge rule the simulator runs, with
//! that reader's parameters under unit-carrying names, named presets with their published
//! defaults, and validation.

use serde::{Deserialize, Serialize};

use crate::error::CoalesceError;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// How needed ranges become read tasks. Each variant is one reader's rule; its doc comment
/// names the source it follows. Build one with [`CoalescePolicy::preset`] and adjust fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum CoalescePolicy {
    /// ClickHouse before the redesign (`Prefetcher::pickRangesAndCreateTask` in
    /// ClickHouse/ClickHouse `src/Processors/Formats/Impl/Parquet/Prefetcher.cpp`): lazy
    /// extension over not-yet-started neighbours while the gap is `< min_bytes_for_seek` and
    /// the neighbour lies less than `bytes_per_read_task` beyond the first range's edges (before
    /// its start, past its end); a neighbour joins only if it is likely used
    /// or shorter than `min_bytes_for_seek`; only equal `group` ids share a task. No bound on
    /// amplification; large ranges are never split.
    #[serde(rename = "clickhouse-base")]
    ClickHouseBase {
        /// `remote_read_min_bytes_for_seek` (4 MiB) or
        /// `input_format_parquet_local_file_min_bytes_for_seek` (8 KiB).
        #[serde(with = "crate::serde_units::bytes")]
        min_bytes_for_seek: u64,
        /// Cap on how far a task reaches beyond its first range; ClickHouse derives it as
        /// 4 x `min_bytes_for_seek`.
        #[serde(with = "crate::serde_units::bytes")]
        bytes_per_read_task: u64,
    },
    /// ClickHouse's redesign (`docs/readpath.md` R2, R8): gap rule with the effective gap
    /// `min(coalesce_gap_bytes, min_bytes_for_seek)`, a bound on read amplification that only
    /// applies to reads wasting more than a floor, a cap on the span, and reading through gaps
    /// the source already caches.
    #[serde(rename = "clickhouse-redesign")]
    ClickHouseRedesign {
        /// `min_bytes_for_seek` as for the base reader (4 MiB remote, 8 KiB local).
        #[serde(with = "crate::serde_units::bytes")]
        min_bytes_for_seek: u64,
        /// `input_format_parquet_coalesce_gap_bytes` (2 MiB remote).
        #[serde(with = "crate::serde_units::bytes")]
        coalesce_gap_bytes: u64,
        /// `input_format_parquet_max_read_amplification`: bytes read / bytes needed (8);
        /// 0 disables the bound; values in (0, 1) are invalid.
        max_read_amplification: f64,
        /// `input_format_parquet_read_amplification_floor_bytes` (256 KiB): the ratio applies
        /// only to a read wasting more than this. 0 = ratio alone.
        #[serde(with = "crate::serde_units::bytes")]
        read_amplification_floor_bytes: u64,
        /// `input_format_parquet_bytes_per_read_task`; 0 = derive 4 x `min_bytes_for_seek`.
        #[serde(with = "crate::serde_units::bytes")]
        bytes_per_read_task: u64,
        /// R8: gap bytes the source already caches cost nothing and do not count as gap.
        read_through_cached: bool,
    },
    /// arrow-rs via object_store `coalesce_ranges`/`merge_ranges` (apache/arrow-rs-object-store
    /// `src/util.rs`, 0.14): extend while `next.start - cur.end <= coalesce_bytes`; no cap.
    ArrowRs {
        /// The `coalesce` argument, `OBJECT_STORE_COALESCE_DEFAULT` = 1 MiB.
        #[serde(with = "crate::serde_units::bytes")]
        coalesce_bytes: u64,
    },
    /// Arrow C++ `ReadRangeCache` (apache/arrow `cpp/src/arrow/io/interfaces.cc`
    /// `ReadRangeCombiner::Coalesce`, `cpp/src/arrow/io/caching.cc` `CacheOptions`).
    ArrowCpp {
        /// `hole_size_limit` (8 KiB): a larger gap starts a new read.
        #[serde(with = "crate::serde_units::bytes")]
        hole_size_limit_bytes: u64,
        /// `range_size_limit` (32 MiB): a read may not grow past this.
        #[serde(with = "crate::serde_units::bytes")]
        range_size_limit_bytes: u64,
    },
    /// DuckDB's Parquet read heads (duckdb `extension/parquet/include/thrift_tools.hpp`,
    /// `ReadHeadComparator`): a range joins a head when `head.end + gap >= start`.
    #[serde(rename = "duckdb")]
    DuckDb {
        /// `ALLOW_GAP` (16 KiB), or a fitted gap from [`crate::duckdb_fitted_gap`].
        #[serde(with = "crate::serde_units::bytes")]
        gap_bytes: u64,
    },
    /// Velox `DirectBufferedInput` (facebookincubator/velox
    /// `velox/dwio/common/DirectBufferedInput.cpp`, `groupRequests` over `coalesceIo` in
    /// `velox/common/base/CoalesceIo.h`): adjacent requests and gaps `< max_gap_bytes` group
    /// while the payload, each request counted at most `load_quantum_bytes`, stays within
    /// `max_coalesced_bytes`; a group is one GET through `load_quantum_bytes` of its last
    /// request, the rest of which is read in GETs of `load_quantum_bytes`.
    Velox {
        /// `max-coalesced-distance` (512 KiB; 20,000 B from the SSD cache).
        #[serde(with = "crate::serde_units::bytes")]
        max_gap_bytes: u64,
        /// `load-quantum` (8 MiB): the most a request counts, and the most of a group's last
        /// request its GET reads.
        #[serde(with = "crate::serde_units::bytes")]
        load_quantum_bytes: u64,
        /// `max-coalesced-bytes` (128 MiB): the payload of one group when the load is a
        /// prefetch; `DirectBufferedInput::groupRequests` uses `load-quantum` instead for
        /// requests read less than `cache_prefetch_min_pct` (80%) of the times referenced.
        #[serde(with = "crate::serde_units::bytes")]
        max_coalesced_bytes: u64,
    },
    /// Trino (trinodb/trino `lib/trino-parquet/.../AbstractParquetDataSource.java`,
    /// `planChunksRead`, `mergeAdjacentDiskRanges`).
    Trino {
        /// `parquet.max-merge-distance` (1 MB).
        #[serde(with = "crate::serde_units::bytes")]
        max_merge_distance_bytes: u64,
        /// `parquet.max-buffer-size` (8 MB): larger ranges are split into reads of this size.
        #[serde(with = "crate::serde_units::bytes")]
        max_buffer_size_bytes: u64,
    },
    /// parquet-java's vectored read (apache/parquet-java `ParquetFileReader`: adjacent chunks
    /// one range) through Hadoop S3A (apache/hadoop `VectoredReadUtils.mergeSortedRanges`),
    /// what Spark's Parquet reader uses.
    HadoopS3a {
        /// `fs.s3a.vectored.read.min.seek.size` (128 KiB since Hadoop 3.4.2, HADOOP-19229):
        /// merge refused when gap >= this.
        #[serde(with = "crate::serde_units::bytes")]
        min_seek_bytes: u64,
        /// `fs.s3a.vectored.read.max.merged.size` (2 MiB since Hadoop 3.4.2): no merge past
        /// this; a range parquet-java asks for is never split.
        #[serde(with = "crate::serde_units::bytes")]
        max_merged_bytes: u64,
    },
    /// Polars (pola-rs/polars `crates/polars-io/src/cloud/polars_object_store.rs`,
    /// `merge_ranges`, `split_range`).
    Polars {
        /// `POLARS_DOWNLOAD_CHUNK_SIZE_RANDOM_ACCESS` (8 MiB): merged reads aim at this size and
        /// larger ones are split to it.
        #[serde(with = "crate::serde_units::bytes")]
        chunk_size_bytes: u64,
        /// Lower clamp of the gap tolerance (1 MiB).
        #[serde(with = "crate::serde_units::bytes")]
        min_gap_bytes: u64,
        /// Upper clamp of the gap tolerance (8 MiB).
        #[serde(with = "crate::serde_units::bytes")]
        max_gap_bytes: u64,
    },
}

/// Every preset name [`CoalescePolicy::preset`] accepts.
pub const PRESET_NAMES: &[&str] = &[
    "clickhouse-base",
    "clickhouse-base-local",
    "clickhouse-redesign",
    "clickhouse-redesign-local",
    "arrow-rs",
    "arrow-cpp",
    "duckdb",
    "velox",
    "trino",
    "hadoop-s3a",
    "polars",
];

impl CoalescePolicy {
    /// The named preset with its published defaults (see [`PRESET_NAMES`]).
    pub fn preset(name: &str) -> Result<Self, CoalesceError> {
        Ok(match name {
            "clickhouse-base" => Self::ClickHouseBase {
                min_bytes_for_seek: 4 * MIB,
                bytes_per_read_task: 16 * MIB,
            },
            "clickhouse-base-local" => Self::ClickHouseBase {
                min_bytes_for_seek: 8 * KIB,
                bytes_per_read_task: 32 * KIB,
            },
            "clickhouse-redesign" => Self::ClickHouseRedesign {
                min_bytes_for_seek: 4 * MIB,
                coalesce_gap_bytes: 2 * MIB,
                max_read_amplification: 8.0,
                read_amplification_floor_bytes: 256 * KIB,
                bytes_per_read_task: 16 * MIB,
                read_through_cached: true,
            },
            "clickhouse-redesign-local" => Self::ClickHouseRedesign {
                min_bytes_for_seek: 8 * KIB,
                coalesce_gap_bytes: 8 * KIB,
                max_read_amplification: 8.0,
                read_amplification_floor_bytes: 256 * KIB,
                bytes_per_read_task: 32 * KIB,
                read_through_cached: true,
            },
            "arrow-rs" => Self::ArrowRs {
                coalesce_bytes: MIB,
            },
            "arrow-cpp" => Self::ArrowCpp {
                hole_size_limit_bytes: 8 * KIB,
                range_size_limit_bytes: 32 * MIB,
            },
            "duckdb" => Self::DuckDb {
                gap_bytes: 16 * KIB,
            },
            // velox/connectors/hive/FileConfig: max-coalesced-distance "512kB",
            // load-quantum 8 << 20, max-coalesced-bytes 128 << 20.
            "velox" => Self::Velox {
                max_gap_bytes: 512 * KIB,
                load_quantum_bytes: 8 * MIB,
                max_coalesced_bytes: 128 * MIB,
            },
            // airlift DataSize units are binary: "1MB" is 1,048,576 bytes.
            "trino" => Self::Trino {
                max_merge_distance_bytes: MIB,
                max_buffer_size_bytes: 8 * MIB,
            },
            "hadoop-s3a" => Self::HadoopS3a {
                min_seek_bytes: 128 * KIB,
                max_merged_bytes: 2 * MIB,
            },
            "polars" => Self::Polars {
                chunk_size_bytes: 8 * MIB,
                min_gap_bytes: MIB,
                max_gap_bytes: 8 * MIB,
            },
            _ => {
                return Err(CoalesceError::UnknownPreset {
                    name: name.to_owned(),
                    known: PRESET_NAMES.join(", "),
                })
            }
        })
    }

    /// The reader family this policy models, as a preset name without `-local`.
    pub fn family(&self) -> &'static str {
        match self {
            Self::ClickHouseBase { .. } => "clickhouse-base",
            Self::ClickHouseRedesign { .. } => "clickhouse-redesign",
            Self::ArrowRs { .. } => "arrow-rs",
            Self::ArrowCpp { .. } => "arrow-cpp",
            Self::DuckDb { .. } => "duckdb",
            Self::Velox { .. } => "velox",
            Self::Trino { .. } => "trino",
            Self::HadoopS3a { .. } => "hadoop-s3a",
            Self::Polars { .. } => "polars",
        }
    }

    /// Accepts the settings if every one is in its valid domain; otherwise names the first one
    /// that is not and what would be valid.
    pub fn validate(&self) -> Result<(), CoalesceError> {
        let preset = self.family();
        let bad = |setting: &'static str, value: String, expected: &'static str| {
            Err(CoalesceError::InvalidSetting {
                preset,
                setting,
                value,
                expected,
            })
        };
        match *self {
            Self::ClickHouseRedesign {
                max_read_amplification: ratio,
                ..
            } if !ratio.is_finite() || (ratio != 0.0 && ratio < 1.0) => bad(
                "max_read_amplification",
                ratio.to_string(),
                "0 (no bound) or a finite ratio >= 1",
            ),
            Self::ArrowCpp {
                hole_size_limit_bytes: hole,
                range_size_limit_bytes: range,
            } if range <= hole => bad(
                "range_size_limit_bytes",
                range.to_string(),
                "a limit larger than hole_size_limit_bytes",
            ),
            Self::Velox {
                load_quantum_bytes: 0,
                ..
            } => bad("load_quantum_bytes", "0".into(), "a positive byte count"),
            Self::Trino {
                max_buffer_size_bytes: 0,
                ..
            } => bad("max_buffer_size_bytes", "0".into(), "a positive byte count"),
            Self::Polars {
                chunk_size_bytes: 0,
                ..
            } => bad("chunk_size_bytes", "0".into(), "a positive byte count"),
            Self::Polars {
                min_gap_bytes,
                max_gap_bytes,
                ..
            } if min_gap_bytes > max_gap_bytes => bad(
                "min_gap_bytes",
                min_gap_bytes.to_string(),
                "a lower clamp no larger than max_gap_bytes",
            ),
            _ => Ok(()),
        }
    }

    /// The largest gap of uncached bytes one task may bridge under this policy (a task may
    /// read through larger gaps only where the source already caches them).
    pub fn max_bridged_gap_bytes(&self) -> u64 {
        match *self {
            // `gap < min_bytes_for_seek`
            Self::ClickHouseBase {
                min_bytes_for_seek, ..
            } => min_bytes_for_seek.saturating_sub(1),
            // `gap < effective` (`end_offset + gap_bytes <= r.start` refuses)
            Self::ClickHouseRedesign { .. } => self.effective_gap_bytes().saturating_sub(1),
            Self::ArrowRs { coalesce_bytes } => coalesce_bytes,
            Self::ArrowCpp {
                hole_size_limit_bytes,
                ..
            } => hole_size_limit_bytes,
            Self::DuckDb { gap_bytes } => gap_bytes,
            // `0 < gap < maxGap`
            Self::Velox { max_gap_bytes, .. } => max_gap_bytes.saturating_sub(1),
            Self::Trino {
                max_merge_distance_bytes,
                ..
            } => max_merge_distance_bytes,
            // refused when `gap >= min_seek`
            Self::HadoopS3a { min_seek_bytes, .. } => min_seek_bytes.saturating_sub(1),
            Self::Polars { max_gap_bytes, .. } => max_gap_bytes,
        }
    }

    /// The redesign's effective gap, `min(coalesce_gap_bytes, min_bytes_for_seek)` (0 meaning
    /// `min_bytes_for_seek`): a gap must be shorter to be bridged; for other
    /// presets the same as [`Self::max_bridged_gap_bytes`].
    pub fn effective_gap_bytes(&self) -> u64 {
        match *self {
            Self::ClickHouseRedesign {
                min_bytes_for_seek,
                coalesce_gap_bytes,
                ..
            } => crate::presets::effective_gap_bytes(coalesce_gap_bytes, min_bytes_for_seek),
            _ => self.max_bridged_gap_bytes(),
        }
    }

    /// The cap on a merged task's span, if the policy has one (a single needed range larger
    /// than the cap still makes one task unless the preset splits large ranges). ClickHouse's
    /// presets count it from their first range's edges, so their span may exceed it by that
    /// range (and, lazily, by the cap again leftwards).
    pub fn max_task_bytes(&self) -> Option<u64> {
        match *self {
            Self::ClickHouseBase {
                min_bytes_for_seek,
                bytes_per_read_task,
            }
            | Self::ClickHouseRedesign {
                min_bytes_for_seek,
                bytes_per_read_task,
                ..
            } => Some(derive_bytes_per_read_task(
                min_bytes_for_seek,
                bytes_per_read_task,
            )),
            // Velox caps a group's payload (requests counted up to the quantum), not its span;
            // parquet-java's adjacent chunks are one range whatever its length, which S3A's
            // bound does not split.
            Self::ArrowRs { .. } | Self::DuckDb { .. } | Self::Velox { .. } => None,
            Self::HadoopS3a { .. } => None,
            Self::ArrowCpp {
                range_size_limit_bytes,
                ..
            } => Some(range_size_limit_bytes),
            Self::Trino {
                max_buffer_size_bytes,
                ..
            } => Some(max_buffer_size_bytes),
            Self::Polars { .. } => None,
        }
    }
}

/// `bytes_per_read_task`, with ClickHouse's "0 = derive 4 x `min_bytes_for_seek`".
pub(crate) fn derive_bytes_per_read_task(min_bytes_for_seek: u64, bytes_per_read_task: u64) -> u64 {
    if bytes_per_read_task == 0 {
        min_bytes_for_seek.saturating_mul(4)
    } else {
        bytes_per_read_task
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_preset_exists_and_is_valid() {
        for name in PRESET_NAMES {
            let p = CoalescePolicy::preset(name).unwrap();
            assert_eq!(p.validate(), Ok(()), "{name}");
            assert!(name.starts_with(p.family()), "{name} vs {}", p.family());
        }
    }

    #[test]
    fn unknown_preset_lists_the_known_ones() {
        let e = CoalescePolicy::preset("arrow_rs").unwrap_err().to_string();
        assert!(e.contains("\"arrow_rs\"") && e.contains("arrow-rs"), "{e}");
    }

    #[test]
    fn redesign_effective_gap_is_the_smaller_setting() {
        let p = CoalescePolicy::preset("clickhouse-redesign").unwrap();
        assert_eq!(p.effective_gap_bytes(), 2 * MIB);
        assert_eq!(
            p.max_bridged_gap_bytes(),
            2 * MIB - 1,
            "a gap must be shorter"
        );
        let local = CoalescePolicy::preset("clickhouse-redesign-local").unwrap();
        assert_eq!(local.max_bridged_gap_bytes(), 8 * KIB - 1);
        let base = CoalescePolicy::preset("clickhouse-base").unwrap();
        assert_eq!(base.max_bridged_gap_bytes(), 4 * MIB - 1);
        // "or min_bytes_for_seek if the setting is 0"
        let mut zero = p.clone();
        if let CoalescePolicy::ClickHouseRedesign {
            coalesce_gap_bytes, ..
        } = &mut zero
        {
            *coalesce_gap_bytes = 0;
        }
        assert_eq!(zero.effective_gap_bytes(), 4 * MIB);
    }

    #[test]
    fn absurd_settings_are_refused_with_the_setting_named() {
        let mut p = CoalescePolicy::preset("clickhouse-redesign").unwrap();
        for bad in [0.5, -1.0, f64::NAN, f64::INFINITY] {
            if let CoalescePolicy::ClickHouseRedesign {
                max_read_amplification,
                ..
            } = &mut p
            {
                *max_read_amplification = bad;
            }
            let e = p.validate().unwrap_err().to_string();
            assert!(e.contains("max_read_amplification"), "{e}");
        }
        let bad = [
            CoalescePolicy::ArrowCpp {
                hole_size_limit_bytes: 10,
                range_size_limit_bytes: 10,
            },
            CoalescePolicy::Velox {
                max_gap_bytes: 1,
                load_quantum_bytes: 0,
                max_coalesced_bytes: 1,
            },
            CoalescePolicy::Trino {
                max_merge_distance_bytes: 1,
                max_buffer_size_bytes: 0,
            },
            CoalescePolicy::Polars {
                chunk_size_bytes: 0,
                min_gap_bytes: 1,
                max_gap_bytes: 2,
            },
            CoalescePolicy::Polars {
                chunk_size_bytes: 8,
                min_gap_bytes: 3,
                max_gap_bytes: 2,
            },
        ];
        for p in bad {
            assert!(p.validate().is_err(), "{p:?}");
        }
    }

    #[test]
    fn policies_round_trip_through_json_under_their_preset_names() {
        for name in PRESET_NAMES {
            let p = CoalescePolicy::preset(name).unwrap();
            let json = serde_json::to_value(&p).unwrap();
            assert_eq!(json["kind"], p.family(), "{json}");
            let back: CoalescePolicy = serde_json::from_value(json).unwrap();
            assert_eq!(back, p);
        }
        let typo = r#"{"kind": "arrow-rs", "coalesce_byte": 5}"#;
        let e = serde_json::from_str::<CoalescePolicy>(typo)
            .unwrap_err()
            .to_string();
        assert!(e.contains("coalesce_byte"), "{e}");
    }

    #[test]
    fn sizes_are_written_with_units() {
        let json = r#"{"kind": "velox", "max_gap_bytes": "20000B", "load_quantum_bytes": "8MiB", "max_coalesced_bytes": "128MiB"}"#;
        let p: CoalescePolicy = serde_json::from_str(json).unwrap();
        assert_eq!(
            p,
            CoalescePolicy::Velox {
                max_gap_bytes: 20_000,
                load_quantum_bytes: 8 * MIB,
                max_coalesced_bytes: 128 * MIB,
            }
        );
        let odd = CoalescePolicy::ArrowRs {
            coalesce_bytes: MIB + 1,
        };
        let text = serde_json::to_string(&odd).unwrap();
        assert!(text.contains("1048577B"), "{text}");
        assert_eq!(serde_json::from_str::<CoalescePolicy>(&text).unwrap(), odd);
        let bare = r#"{"kind": "arrow-rs", "coalesce_bytes": 1048576}"#;
        let e = serde_json::from_str::<CoalescePolicy>(bare)
            .unwrap_err()
            .to_string();
        assert!(e.contains("unit"), "{e}");
    }

    #[test]
    fn ratio_zero_means_no_bound() {
        let p = CoalescePolicy::ClickHouseRedesign {
            min_bytes_for_seek: 1,
            coalesce_gap_bytes: 1,
            max_read_amplification: 0.0,
            read_amplification_floor_bytes: 0,
            bytes_per_read_task: 0,
            read_through_cached: false,
        };
        assert_eq!(p.validate(), Ok(()));
        assert_eq!(p.max_task_bytes(), Some(4));
    }
}
