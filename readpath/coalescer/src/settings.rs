//! Setting one policy parameter by name, as sweeps and scenario overrides do: the field name,
//! or the reader's own setting name where it has one (`input_format_parquet_coalesce_gap_bytes`,
//! `parquet.max-merge-distance`, `fs.s3a.vectored.read.min.seek.size`...).

use crate::error::CoalesceError;
use crate::policy::CoalescePolicy;

/// A mutable parameter of a policy.
enum Slot<'a> {
    Bytes(&'a mut u64),
    Ratio(&'a mut f64),
    Flag(&'a mut bool),
}

/// `(accepted names, field)` per policy family: the field name first, then aliases.
const BASE_KEYS: &[&[&str]] = &[
    &[
        "min_bytes_for_seek",
        "remote_read_min_bytes_for_seek",
        "input_format_parquet_local_file_min_bytes_for_seek",
    ],
    &[
        "bytes_per_read_task",
        "input_format_parquet_bytes_per_read_task",
    ],
];
const REDESIGN_KEYS: &[&[&str]] = &[
    &[
        "min_bytes_for_seek",
        "remote_read_min_bytes_for_seek",
        "input_format_parquet_local_file_min_bytes_for_seek",
    ],
    &[
        "coalesce_gap_bytes",
        "input_format_parquet_coalesce_gap_bytes",
    ],
    &[
        "max_read_amplification",
        "input_format_parquet_max_read_amplification",
    ],
    &[
        "read_amplification_floor_bytes",
        "input_format_parquet_read_amplification_floor_bytes",
    ],
    &[
        "bytes_per_read_task",
        "input_format_parquet_bytes_per_read_task",
    ],
    &["read_through_cached"],
];
const ARROW_RS_KEYS: &[&[&str]] = &[&["coalesce_bytes", "coalesce"]];
const ARROW_CPP_KEYS: &[&[&str]] = &[
    &["hole_size_limit_bytes", "hole_size_limit"],
    &["range_size_limit_bytes", "range_size_limit"],
];
const DUCKDB_KEYS: &[&[&str]] = &[&["gap_bytes"]];
const VELOX_KEYS: &[&[&str]] = &[
    &["max_gap_bytes", "maxCoalesceDistance"],
    &["max_read_bytes", "loadQuantum"],
];
const TRINO_KEYS: &[&[&str]] = &[
    &["max_merge_distance_bytes", "parquet.max-merge-distance"],
    &["max_buffer_size_bytes", "parquet.max-buffer-size"],
];
const HADOOP_KEYS: &[&[&str]] = &[
    &["min_seek_bytes", "fs.s3a.vectored.read.min.seek.size"],
    &["max_merged_bytes", "fs.s3a.vectored.read.max.merged.size"],
];
const POLARS_KEYS: &[&[&str]] = &[
    &[
        "chunk_size_bytes",
        "POLARS_DOWNLOAD_CHUNK_SIZE_RANDOM_ACCESS",
    ],
    &["min_gap_bytes"],
    &["max_gap_bytes"],
];

impl CoalescePolicy {
    fn keys(&self) -> &'static [&'static [&'static str]] {
        match self {
            Self::ClickHouseBase { .. } => BASE_KEYS,
            Self::ClickHouseRedesign { .. } => REDESIGN_KEYS,
            Self::ArrowRs { .. } => ARROW_RS_KEYS,
            Self::ArrowCpp { .. } => ARROW_CPP_KEYS,
            Self::DuckDb { .. } => DUCKDB_KEYS,
            Self::Velox { .. } => VELOX_KEYS,
            Self::Trino { .. } => TRINO_KEYS,
            Self::HadoopS3a { .. } => HADOOP_KEYS,
            Self::Polars { .. } => POLARS_KEYS,
        }
    }

    /// Every name [`Self::set`] accepts for this policy: field names and their aliases.
    pub fn setting_names(&self) -> Vec<&'static str> {
        self.keys()
            .iter()
            .flat_map(|names| names.iter().copied())
            .collect()
    }

    /// The field a key names (its position in `keys()`), and the field's slot.
    fn slot(&mut self, field: usize) -> Option<Slot<'_>> {
        use Slot::{Bytes, Flag, Ratio};
        Some(match (self, field) {
            (
                Self::ClickHouseBase {
                    min_bytes_for_seek, ..
                },
                0,
            ) => Bytes(min_bytes_for_seek),
            (
                Self::ClickHouseBase {
                    bytes_per_read_task,
                    ..
                },
                1,
            ) => Bytes(bytes_per_read_task),
            (
                Self::ClickHouseRedesign {
                    min_bytes_for_seek, ..
                },
                0,
            ) => Bytes(min_bytes_for_seek),
            (
                Self::ClickHouseRedesign {
                    coalesce_gap_bytes, ..
                },
                1,
            ) => Bytes(coalesce_gap_bytes),
            (
                Self::ClickHouseRedesign {
                    max_read_amplification,
                    ..
                },
                2,
            ) => Ratio(max_read_amplification),
            (
                Self::ClickHouseRedesign {
                    read_amplification_floor_bytes,
                    ..
                },
                3,
            ) => Bytes(read_amplification_floor_bytes),
            (
                Self::ClickHouseRedesign {
                    bytes_per_read_task,
                    ..
                },
                4,
            ) => Bytes(bytes_per_read_task),
            (
                Self::ClickHouseRedesign {
                    read_through_cached,
                    ..
                },
                5,
            ) => Flag(read_through_cached),
            (Self::ArrowRs { coalesce_bytes }, 0) => Bytes(coalesce_bytes),
            (
                Self::ArrowCpp {
                    hole_size_limit_bytes,
                    ..
                },
                0,
            ) => Bytes(hole_size_limit_bytes),
            (
                Self::ArrowCpp {
                    range_size_limit_bytes,
                    ..
                },
                1,
            ) => Bytes(range_size_limit_bytes),
            (Self::DuckDb { gap_bytes }, 0) => Bytes(gap_bytes),
            (Self::Velox { max_gap_bytes, .. }, 0) => Bytes(max_gap_bytes),
            (Self::Velox { max_read_bytes, .. }, 1) => Bytes(max_read_bytes),
            (
                Self::Trino {
                    max_merge_distance_bytes,
                    ..
                },
                0,
            ) => Bytes(max_merge_distance_bytes),
            (
                Self::Trino {
                    max_buffer_size_bytes,
                    ..
                },
                1,
            ) => Bytes(max_buffer_size_bytes),
            (Self::HadoopS3a { min_seek_bytes, .. }, 0) => Bytes(min_seek_bytes),
            (
                Self::HadoopS3a {
                    max_merged_bytes, ..
                },
                1,
            ) => Bytes(max_merged_bytes),
            (
                Self::Polars {
                    chunk_size_bytes, ..
                },
                0,
            ) => Bytes(chunk_size_bytes),
            (Self::Polars { min_gap_bytes, .. }, 1) => Bytes(min_gap_bytes),
            (Self::Polars { max_gap_bytes, .. }, 2) => Bytes(max_gap_bytes),
            _ => return None,
        })
    }

    /// Sets one parameter by name: sizes with units (`2MiB`, `256KiB`, `0`), the ratio as a
    /// number, `read_through_cached` as `true`/`false`. Errors name an unknown key (with the
    /// nearest valid one) or a value that does not parse. The policy is not re-validated here,
    /// since settings are often changed in turn; [`crate::coalesce`] validates it.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), CoalesceError> {
        let preset = self.family();
        let keys = self.keys();
        let Some(field) = keys.iter().position(|names| names.contains(&key)) else {
            let known = self.setting_names();
            let nearest = known
                .iter()
                .map(|k| (strsim::levenshtein(k, key), *k))
                .min()
                .map(|(_, k)| k.to_owned());
            return Err(CoalesceError::UnknownSetting {
                preset,
                key: key.to_owned(),
                nearest: nearest.unwrap_or_default(),
                known: known.join(", "),
            });
        };
        let setting = keys
            .get(field)
            .and_then(|names| names.first())
            .copied()
            .unwrap_or("?");
        let bad = |reason: String| CoalesceError::BadValue {
            preset,
            setting,
            value: value.to_owned(),
            reason,
        };
        match self.slot(field) {
            Some(Slot::Bytes(target)) => {
                *target = units::parse_bytes(value).map_err(|e| bad(e.to_string()))?
            }
            Some(Slot::Ratio(target)) => {
                *target = value
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| bad("expected a number such as 8 (0 = no bound)".into()))?
            }
            Some(Slot::Flag(target)) => {
                *target = match value.trim() {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    _ => return Err(bad("expected true or false".into())),
                }
            }
            None => return Err(bad("no such parameter on this preset".into())),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clickhouse_names_and_units_set_the_field() {
        let mut p = CoalescePolicy::preset("clickhouse-redesign").unwrap();
        p.set("input_format_parquet_coalesce_gap_bytes", "512KiB")
            .unwrap();
        p.set("max_read_amplification", "4").unwrap();
        p.set("read_through_cached", "false").unwrap();
        p.set("input_format_parquet_read_amplification_floor_bytes", "0")
            .unwrap();
        let CoalescePolicy::ClickHouseRedesign {
            coalesce_gap_bytes,
            max_read_amplification,
            read_through_cached,
            read_amplification_floor_bytes,
            ..
        } = p
        else {
            panic!("preset changed kind");
        };
        assert_eq!(coalesce_gap_bytes, 512 * 1024);
        assert_eq!(max_read_amplification, 4.0);
        assert!(!read_through_cached);
        assert_eq!(read_amplification_floor_bytes, 0);
    }

    #[test]
    fn every_listed_name_is_settable() {
        for name in crate::PRESET_NAMES {
            let p = CoalescePolicy::preset(name).unwrap();
            for key in p.setting_names() {
                let mut q = p.clone();
                let value = match key {
                    "max_read_amplification" | "input_format_parquet_max_read_amplification" => "3",
                    "read_through_cached" => "true",
                    _ => "3MiB",
                };
                q.set(key, value)
                    .unwrap_or_else(|e| panic!("{name} {key}: {e}"));
                assert!(
                    key.contains("read_through") || q != p,
                    "{name} {key} changed nothing"
                );
            }
        }
    }

    #[test]
    fn unknown_keys_and_bad_values_are_explained() {
        let mut p = CoalescePolicy::preset("trino").unwrap();
        let e = p
            .set("parquet.max-merge-distanc", "1MiB")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("did you mean `parquet.max-merge-distance`"),
            "{e}"
        );
        let e = p
            .set("parquet.max-buffer-size", "8")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("parquet.max-buffer-size") || e.contains("max_buffer_size_bytes"),
            "{e}"
        );
        assert!(e.contains("unit"), "{e}");
        let mut r = CoalescePolicy::preset("clickhouse-redesign").unwrap();
        assert!(r.set("read_through_cached", "yes").is_err());
        assert!(r.set("max_read_amplification", "eight").is_err());
    }
}
