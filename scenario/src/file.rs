//! The scenario file as written: the YAML schema, with every section `deny_unknown_fields`.
//!
//! A scenario names a table (generated or recorded), one or more queries, a store, the cache
//! state, the CPU, settings shared by every arm, and the arms (a strategy preset plus setting
//! overrides). `cases:` repeat the whole scenario under named sets of overrides (e.g. cache
//! states, or table shapes), and `sweep:` declares default sweep axes for `sim sweep`.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Root seed: every random stream of a run derives from it, the replication and the arm-
    /// independent subsystem, so arms see common random numbers.
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "one")]
    pub replications: u32,
    pub table: TableSource,
    /// One query, or `queries:` for several run one after another (their times add up).
    #[serde(default)]
    pub query: Option<QueryConfig>,
    #[serde(default)]
    pub queries: Vec<QueryConfig>,
    /// A preset name (`s3-standard`) or an inline store model.
    pub store: serde_json::Value,
    #[serde(default)]
    pub caches: CachesConfig,
    #[serde(default)]
    pub cpu: Option<models::cpu::CpuSpec>,
    /// Settings applied to every arm before the arm's own (ClickHouse names).
    #[serde(default)]
    pub settings: BTreeMap<String, Scalar>,
    pub arms: Vec<ArmConfig>,
    #[serde(default)]
    pub cases: Vec<CaseConfig>,
    #[serde(default)]
    pub sweep: Option<SweepConfig>,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSource {
    /// A deterministic synthetic layout.
    #[serde(default)]
    pub generate: Option<tablegen::GeneratorSpec>,
    /// A recorded layout file (`sim record`), relative to the scenario file.
    #[serde(default)]
    pub layout: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct QueryConfig {
    #[serde(default)]
    pub name: Option<String>,
    /// The columns the query reads: schema indexes or names.
    pub columns: Vec<ColumnRef>,
    /// Which files the query reads (default: all).
    #[serde(default)]
    pub files: FileSelection,
    /// Fraction of row groups that survive min/max pruning (a seeded draw: generated tables).
    #[serde(default = "fraction_one")]
    pub row_groups: f64,
    /// Or a predicate judged against each row group's recorded min/max (recorded tables;
    /// grammar in `scenario::predicate`). On an Iceberg table it also plans only the files
    /// whose row groups may match, as a scan planned from manifests does.
    #[serde(default)]
    pub predicate: Option<String>,
    #[serde(default)]
    pub prewhere: Option<PrewhereConfig>,
    /// Columns with a pushdown condition: their column index is read and prunes pages.
    #[serde(default)]
    pub column_index: Option<ColumnIndexConfig>,
    #[serde(default)]
    pub bloom: Option<BloomConfig>,
}

fn fraction_one() -> f64 {
    1.0
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum ColumnRef {
    Index(u32),
    Name(String),
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct FileSelection {
    /// Read `count` files starting at `first` (a time slice of a partitioned table).
    #[serde(default)]
    pub first: Option<u32>,
    #[serde(default)]
    pub count: Option<u32>,
    /// Or a fraction of the files, spread evenly.
    #[serde(default)]
    pub fraction: Option<f64>,
    /// Or the files of these partitions (Iceberg's partition pruning on a recorded table): a
    /// file is read when a directory of its path is one of these, as writers that name
    /// directories by partition value lay them out (pyiceberg, Spark, Trino); a trailing `*`
    /// matches any rest: `l_shipdate_month=1994-*` reads the twelve months of 1994.
    #[serde(default)]
    pub partitions: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrewhereConfig {
    pub columns: Vec<ColumnRef>,
    /// Fraction of rows that pass the PREWHERE filter.
    pub selectivity: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnIndexConfig {
    pub columns: Vec<ColumnRef>,
    /// Fraction of rows whose pages survive column-index pruning.
    pub keep_fraction: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BloomConfig {
    pub columns: Vec<ColumnRef>,
    /// Fraction of row groups the bloom filters drop.
    #[serde(default)]
    pub drop_fraction: f64,
    /// Hash probes per row group (each hits one 32-byte block).
    #[serde(default = "one")]
    pub probes: u32,
}

#[derive(Debug, Clone, Copy, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Warmth {
    #[default]
    Cold,
    Warm,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CachesConfig {
    /// Parquet metadata cache (footers): warm = no footer reads.
    #[serde(default)]
    pub parquet_metadata: Warmth,
    /// `use_iceberg_metadata_files_cache`: warm = no metadata phase.
    #[serde(default)]
    pub iceberg_metadata: Warmth,
    #[serde(default)]
    pub page_cache: Option<models::page_cache::PageCacheSpec>,
    #[serde(default)]
    pub filesystem_cache: Option<models::fs_cache::FsCacheSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArmConfig {
    pub name: String,
    /// A strategy preset: clickhouse-base, clickhouse-redesign, arrow-rs, arrow-cpp, duckdb,
    /// velox, trino, hadoop-s3a, polars.
    pub strategy: String,
    #[serde(default)]
    pub settings: BTreeMap<String, Scalar>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseConfig {
    pub name: String,
    /// Overrides, as `--set` takes them: `path: value`.
    #[serde(default)]
    pub set: BTreeMap<String, Scalar>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepConfig {
    /// `name: values` as `--vary` takes them (`64KiB..16MiB:x2` or `0,256KiB,1MiB`), in the
    /// order written: the first is the plots' x axis.
    pub vary: Ordered,
    #[serde(default)]
    pub reps: Option<u32>,
}

/// A YAML scalar kept as the text the user wrote (`2MiB`, `8`, `0.35`, `true`), so that each
/// setting parses it with its own unit rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar(pub String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Scalar;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a value such as `2MiB`, `8` or `true`")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Scalar, E> {
                Ok(Scalar(v.to_string()))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar("null".to_string()))
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar("null".to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A YAML map whose entries keep the order they were written in (a sweep's axes).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ordered(pub Vec<(String, String)>);

impl Ordered {
    pub fn iter(&self) -> impl Iterator<Item = (&String, &String)> {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of `name: values`, e.g. `input_format_parquet_coalesce_gap_bytes: 64KiB..16MiB:x4`")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Ordered, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Scalar>()? {
                    if out.iter().any(|(x, _): &(String, String)| *x == k) {
                        return Err(serde::de::Error::custom(format!(
                            "`{k}` is varied twice; give each axis once"
                        )));
                    }
                    out.push((k, v.0));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(V)
    }
}
