//! Every setting a strategy understands, declared once (in the manner of ClickHouse's
//! `DECLARE(type, name, default, "doc", flags)` list): its name, its type with unit and domain,
//! a one-line doc, where the concept and its default come from, which presets honour it, and
//! how to read and write it on a [`Strategy`]. `Strategy::set`, `sim settings`, scenario
//! settings, overrides, sweep axes and tune parameters all go through [`SETTINGS`]; text
//! becomes a [`Value`] once, where the user typed it ([`Kind::parse`]).
//!
//! Adding a setting is one entry here plus the code that uses the field.

use coalescer::CoalescePolicy;

use crate::strategy::{Family, FooterRead, Storage, Strategy, WholeFile};

/// A setting's type, with its unit and domain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// `true` / `false`.
    Bool,
    /// A whole number in `min..=max`; with `unlimited`, the word `unlimited` is `u64::MAX`.
    Count { min: u64, max: u64, unlimited: bool },
    /// A size with a unit (`2MiB`, `256KiB`, `0`), in `min..=max` bytes.
    Bytes { min: u64, max: u64 },
    /// A number in `min..=max` (`below` excludes `max`); with `zero_or_at_least`, 0 is also
    /// valid while other values must be at least that.
    Ratio {
        min: f64,
        max: f64,
        below: bool,
        zero_or_at_least: Option<f64>,
    },
    /// One of the listed words.
    Choice(&'static [&'static str]),
}

/// A setting's value, parsed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Count(u64),
    Bytes(u64),
    Ratio(f64),
    Choice(&'static str),
}

impl Value {
    /// As a user would write it (sizes with units, `unlimited`).
    pub fn text(self) -> String {
        match self {
            Value::Bool(b) => b.to_string(),
            Value::Count(u64::MAX) => "unlimited".into(),
            Value::Count(n) => n.to_string(),
            Value::Bytes(b) => exact_bytes(b),
            Value::Ratio(r) => r.to_string(),
            Value::Choice(c) => c.to_string(),
        }
    }

    /// As a number in base units (bytes, counts, ratios; booleans 0/1), for plots and the tuner.
    pub fn number(self) -> f64 {
        match self {
            Value::Bool(b) => f64::from(u8::from(b)),
            Value::Count(n) | Value::Bytes(n) => n as f64,
            Value::Ratio(r) => r,
            Value::Choice(_) => f64::NAN,
        }
    }
}

/// A size as a user would write it, exactly: `3MiB`, `1.5MiB`, else `3000000B`, so that the
/// text parses back to the same value (reports, traces and resumed sweeps quote it).
fn exact_bytes(b: u64) -> String {
    let pretty = units::format_bytes(b);
    if units::parse_bytes(&pretty).ok() == Some(b) {
        return pretty;
    }
    for (unit, name) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if b >= unit && b % unit == 0 {
            return format!("{}{name}", b / unit);
        }
    }
    format!("{b}B")
}

/// Why a text is not a valid value: what is wrong and what would be right.
#[derive(Clone, Debug, PartialEq)]
pub struct Invalid {
    pub why: String,
    pub expected: String,
}

fn invalid(why: impl Into<String>, expected: impl Into<String>) -> Invalid {
    Invalid {
        why: why.into(),
        expected: expected.into(),
    }
}

impl Kind {
    /// Parses text the user typed into a value of this kind, or says what would be valid.
    pub fn parse(self, text: &str) -> Result<Value, Invalid> {
        let t = text.trim();
        match self {
            Kind::Bool => match t {
                "true" | "1" | "on" | "yes" => Ok(Value::Bool(true)),
                "false" | "0" | "off" | "no" => Ok(Value::Bool(false)),
                _ => Err(invalid("not a boolean", "true or false")),
            },
            Kind::Count {
                min,
                max,
                unlimited,
            } => {
                if unlimited && t == "unlimited" {
                    return Ok(Value::Count(u64::MAX));
                }
                let n = units::parse_count(t).map_err(|e| {
                    invalid(e.to_string(), format!("a whole number in {min}..={max}"))
                })?;
                let or_unlimited = if unlimited { " or `unlimited`" } else { "" };
                if n < min {
                    let why = if n == 0 {
                        "0 would leave nothing to run on".to_string()
                    } else {
                        format!("below {min}")
                    };
                    return Err(invalid(why, format!("at least {min}{or_unlimited}")));
                }
                if n > max {
                    return Err(invalid(
                        format!("above {max}"),
                        format!("at most {max}{or_unlimited}"),
                    ));
                }
                Ok(Value::Count(n))
            }
            Kind::Bytes { min, max } => {
                let b = units::parse_bytes(t).map_err(|e| {
                    invalid(e.to_string(), "a size with a unit, e.g. 2MiB or 256KiB")
                })?;
                if b < min || b > max {
                    return Err(invalid(
                        format!("outside {}..={}", fmt_b(min), fmt_b(max)),
                        format!("a size from {} to {}", fmt_b(min), fmt_b(max)),
                    ));
                }
                Ok(Value::Bytes(b))
            }
            Kind::Ratio {
                min,
                max,
                below,
                zero_or_at_least,
            } => {
                let v: f64 = t
                    .parse()
                    .map_err(|_| invalid("not a number", "a decimal number, e.g. 0.35"))?;
                if !v.is_finite() {
                    return Err(invalid("not finite", "a finite number"));
                }
                if let Some(at_least) = zero_or_at_least {
                    if v != 0.0 && v < at_least {
                        return Err(invalid(
                            format!("a ratio of read bytes to needed bytes below {at_least} is impossible"),
                            format!("0 (no bound) or a ratio >= {at_least}, e.g. 8"),
                        ));
                    }
                }
                let over = if below { v >= max } else { v > max };
                if v < min || over {
                    let upto = if below {
                        "up to (not including)"
                    } else {
                        "up to"
                    };
                    let why = if v < min {
                        "negative or below the domain".to_string()
                    } else {
                        format!("outside {min}..{max}")
                    };
                    return Err(invalid(why, format!("a number >= {min} {upto} {max}")));
                }
                Ok(Value::Ratio(v))
            }
            Kind::Choice(words) => words
                .iter()
                .find(|w| **w == t)
                .map(|w| Value::Choice(w))
                .ok_or_else(|| {
                    invalid(
                        format!("`{t}` is not one of them"),
                        words
                            .iter()
                            .map(|w| format!("`{w}`"))
                            .collect::<Vec<_>>()
                            .join(" or "),
                    )
                }),
        }
    }

    /// The type as `sim settings` shows it.
    pub fn describe(self) -> String {
        match self {
            Kind::Bool => "bool".into(),
            Kind::Count {
                unlimited: true, ..
            } => "count | unlimited".into(),
            Kind::Count { .. } => "count".into(),
            Kind::Bytes { .. } => "bytes".into(),
            Kind::Ratio { .. } => "ratio".into(),
            Kind::Choice(words) => words.join(" | "),
        }
    }

    /// Whether the tuner rounds it to whole numbers.
    pub fn is_integer(self) -> bool {
        matches!(self, Kind::Count { .. } | Kind::Bytes { .. })
    }
}

fn fmt_b(b: u64) -> String {
    if b == u64::MAX {
        "16EiB".into()
    } else {
        units::format_bytes(b)
    }
}

/// A set of presets' families, as a bit mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Honoured(u16);

impl Honoured {
    pub const ALL: Honoured = Honoured(0xff);
    pub const CLICKHOUSE: Honoured = Honoured(1);
    /// The peers that run on ClickHouse's coupled discipline with their own merge rule.
    pub const COUPLED_PEERS: Honoured = Honoured(
        Honoured::of(Family::Velox).0
            | Honoured::of(Family::Trino).0
            | Honoured::of(Family::HadoopS3a).0,
    );
    /// ClickHouse and the coupled peers: everything the ClickHouse reader's machinery runs.
    pub const CLICKHOUSE_MACHINERY: Honoured =
        Honoured(Honoured::CLICKHOUSE.0 | Honoured::COUPLED_PEERS.0);

    const fn of(family: Family) -> Honoured {
        Honoured(1 << family_bit(family))
    }

    /// Whether a strategy of `family` honours the setting.
    pub fn by(self, family: Family) -> bool {
        self.0 & Honoured::of(family).0 != 0
    }
}

const fn family_bit(f: Family) -> u16 {
    match f {
        Family::ClickHouse => 0,
        Family::ArrowRs => 1,
        Family::ArrowCpp => 2,
        Family::DuckDb => 3,
        Family::Velox => 4,
        Family::Trino => 5,
        Family::HadoopS3a => 6,
        Family::Polars => 7,
    }
}

/// What else a setting needs to do anything on a strategy that honours it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requires {
    /// Nothing: it always applies.
    Nothing,
    /// Redesign mechanism `Rn` on (the setting belongs to it).
    Mechanism(u8),
    /// Redesign mechanism `Rn` off (a base-generation setting the mechanism replaces).
    MechanismOff(u8),
    /// `storage` is this one (the seek threshold of the other storage is not read).
    Storage(Storage),
    /// `row_group_buckets` on.
    RowGroupBuckets,
    /// Arrow C++'s `pre_buffer` on (the `ReadRangeCache` and its limits exist only then).
    PreBuffer,
}

/// One setting.
pub struct Setting {
    /// The name users type: ClickHouse's own for ClickHouse concepts, a peer's own knob name for
    /// its preset, snake_case for the simulator's own knobs.
    pub name: &'static str,
    pub kind: Kind,
    /// What it does, in one line.
    pub doc: &'static str,
    /// Where the concept and the presets' defaults come from (project, file, version).
    pub source: &'static str,
    /// Which presets honour it; setting it on another is an error.
    pub honoured: Honoured,
    /// What else it needs to do anything (a setting that does not apply is said, not hidden).
    pub requires: Requires,
    get: fn(&Strategy) -> Value,
    set: fn(&mut Strategy, Value),
}

impl Setting {
    /// Its value on `s`.
    pub fn get(&self, s: &Strategy) -> Value {
        (self.get)(s)
    }

    /// Writes a value parsed by [`Kind::parse`] of this setting's kind.
    pub(crate) fn set(&self, s: &mut Strategy, v: Value) {
        (self.set)(s, v)
    }

    /// Whether `s` honours it.
    pub fn honoured_by(&self, s: &Strategy) -> bool {
        self.honoured.by(s.family())
    }

    /// Whether it does anything on `s`: honoured, and its mechanism (if any) in the state it
    /// needs.
    pub fn applies_to(&self, s: &Strategy) -> bool {
        self.honoured_by(s)
            && match self.requires {
                Requires::Nothing => true,
                Requires::Mechanism(n) => s.mechanism(n as usize),
                Requires::MechanismOff(n) => !s.mechanism(n as usize),
                Requires::Storage(st) => s.storage == st,
                Requires::RowGroupBuckets => s.row_group_buckets,
                Requires::PreBuffer => s.peer.pre_buffer,
            }
    }

    /// Why it does nothing on `s`, if it does nothing.
    pub fn inert_because(&self, s: &Strategy) -> Option<String> {
        if !self.honoured_by(s) {
            return Some(format!("{} does not honour it", s.name()));
        }
        match self.requires {
            Requires::Mechanism(n) if !s.mechanism(n as usize) => {
                Some(format!("it belongs to R{n}, which is off"))
            }
            Requires::MechanismOff(n) if s.mechanism(n as usize) => {
                Some(format!("R{n}, which is on, replaces it"))
            }
            Requires::Storage(st) if s.storage != st => Some(format!(
                "it is read only with storage = {}; this arm's storage is {}",
                storage_name(st),
                storage_name(s.storage)
            )),
            Requires::RowGroupBuckets if !s.row_group_buckets => {
                Some("row_group_buckets is off".to_string())
            }
            Requires::PreBuffer if !s.peer.pre_buffer => Some(
                "pre_buffer is off: each row group's chunks are read one GET after another, \
                 with no read cache to merge them"
                    .to_string(),
            ),
            _ => None,
        }
    }
}

/// `storage`'s value as users write it.
fn storage_name(st: Storage) -> &'static str {
    match st {
        Storage::Remote => "remote",
        Storage::Local => "local",
    }
}

/// The setting called `name`, if any.
pub fn setting(name: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.name == name)
}

/// Names other code refers to (each name is written once, here).
pub const COMPRESSED_MEMORY_FRACTION: &str = "input_format_parquet_compressed_memory_fraction";
/// Arrow C++'s `hole_size_limit` (the tuner's network-metrics comparison sets it).
/// Arrow C++ `ArrowReaderProperties::pre_buffer` (the `arrow-cpp` preset).
pub const PRE_BUFFER: &str = "pre_buffer";
/// Arrow C++ `CacheOptions::lazy` (`arrow-cpp`).
pub const CACHE_LAZY: &str = "lazy";
/// Arrow C++ CPU pool threads (`arrow-cpp`).
pub const CPU_COUNT: &str = "cpu_count";
/// DuckDB `threads` (`duckdb`).
pub const DUCKDB_THREADS: &str = "threads";
/// Polars `POLARS_MAX_THREADS` (`polars`).
pub const POLARS_MAX_THREADS: &str = "POLARS_MAX_THREADS";
/// Polars `POLARS_INFLIGHT_INIT_BYTE_BUDGET` (`polars`).
pub const POLARS_INFLIGHT_INIT_BYTE_BUDGET: &str = "POLARS_INFLIGHT_INIT_BYTE_BUDGET";
/// Polars `POLARS_RESOLVE_SAMPLE_LIMIT` (`polars`).
pub const POLARS_RESOLVE_SAMPLE_LIMIT: &str = "POLARS_RESOLVE_SAMPLE_LIMIT";
/// Polars `POLARS_DOWNLOAD_CHUNK_SIZE_RANDOM_ACCESS` (`polars`).
pub const POLARS_CHUNK_SIZE: &str = "POLARS_DOWNLOAD_CHUNK_SIZE_RANDOM_ACCESS";
/// Polars `POLARS_CLOUD_FOOTER_READ_SIZE` (`polars`).
pub const POLARS_FOOTER_READ_SIZE: &str = "POLARS_CLOUD_FOOTER_READ_SIZE";
pub const HOLE_SIZE_LIMIT: &str = "hole_size_limit";
/// Arrow C++'s `range_size_limit`.
pub const RANGE_SIZE_LIMIT: &str = "range_size_limit";

/// The redesign's mechanism switches, R1..R10 (index 0 = R1): each a setting of its own, so
/// that an ablation is "clickhouse-base plus one switch".
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

/// Obsolete names and what replaced them.
pub const OBSOLETE: &[(&str, &str)] = &[(
    "input_format_parquet_prefetch_memory_fraction",
    COMPRESSED_MEMORY_FRACTION,
)];

// Value conversions for the accessors. Kinds are checked before `set`, so a mismatch is a bug
// in this table; it leaves the field alone (and debug builds stop).
fn count(v: Value) -> Option<u64> {
    match v {
        Value::Count(n) => Some(n),
        _ => {
            debug_assert!(false, "not a count: {v:?}");
            None
        }
    }
}
fn count32(v: Value) -> Option<u32> {
    count(v).map(|n| u32::try_from(n).unwrap_or(u32::MAX))
}
fn bytes(v: Value) -> Option<u64> {
    match v {
        Value::Bytes(n) => Some(n),
        _ => {
            debug_assert!(false, "not a size: {v:?}");
            None
        }
    }
}
fn ratio(v: Value) -> Option<f64> {
    match v {
        Value::Ratio(r) => Some(r),
        _ => {
            debug_assert!(false, "not a ratio: {v:?}");
            None
        }
    }
}
fn flag(v: Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(b),
        _ => {
            debug_assert!(false, "not a boolean: {v:?}");
            None
        }
    }
}

const THREADS: Kind = Kind::Count {
    min: 1,
    max: MAX_THREADS,
    unlimited: false,
};
const THREADS_OR_ZERO: Kind = Kind::Count {
    min: 0,
    max: MAX_THREADS,
    unlimited: false,
};
const SIZE: Kind = Kind::Bytes {
    min: 0,
    max: u64::MAX,
};

/// The most threads (streams, decode threads, IO threads) a setting may ask for: a node of
/// the largest instance types has 448 vCPUs, and each simulated thread costs memory and work.
pub use limits::MAX_THREADS;

const CH_SETTINGS: &str = "ClickHouse src/Core/Settings.cpp (25.x)";
/// ClickHouse's thread settings, which the coupled peers share for want of their own knob.
const CH_THREADS: &str = "ClickHouse src/Core/Settings.cpp (25.x); on velox, trino and hadoop-s3a the simulator's streams and decode threads under ClickHouse's names, not a knob of those readers (their engines size these from settings of their own, not modelled by name)";
const CH_FORMAT: &str = "ClickHouse src/Core/FormatFactorySettings.h and src/Processors/Formats/Impl/ParquetV3BlockInputFormat.cpp (25.x)";
const REDESIGN: &str = "Altinity/ClickHouse docs/superpowers/specs/2026-08-27-parquet-readpath-redesign.md and src/Processors/Formats/Impl/Parquet/ReadManager.cpp";
const BUCKETS: &str = "ClickHouse PR 104251 (IBucketSplitter::splitToBucketsByCount)";
const VELOX_FILE_CONFIG: &str = "facebookincubator/velox velox/connectors/hive/FileConfig.h and velox/dwio/common/DirectBufferedInput.cpp groupRequests (4d16851, 2026-08)";
const SIMULATOR: &str = "the simulator's knob for a rule several peer readers share; each preset's value comes from its reader's source, named in docs/peers.md";

macro_rules! policy_bytes {
    ($variant:ident, $field:ident) => {
        (
            |s: &Strategy| match &s.peer_policy {
                Some(CoalescePolicy::$variant { $field, .. }) => Value::Bytes(*$field),
                _ => Value::Bytes(0),
            },
            |s: &mut Strategy, v: Value| {
                if let (Some(CoalescePolicy::$variant { $field, .. }), Some(b)) =
                    (&mut s.peer_policy, bytes(v))
                {
                    *$field = b;
                }
            },
        )
    };
}

macro_rules! switch {
    ($i:literal, $doc:literal) => {
        Setting {
            name: R_NAMES[$i],
            kind: Kind::Bool,
            doc: $doc,
            source: REDESIGN,
            honoured: Honoured::CLICKHOUSE,
            requires: Requires::Nothing,
            get: |s| Value::Bool(s.r[$i]),
            set: |s, v| {
                if let Some(b) = flag(v) {
                    s.r[$i] = b;
                }
            },
        }
    };
}

/// A setting's getter and setter over the strategy.
type Accessors = (fn(&Strategy) -> Value, fn(&mut Strategy, Value));

const ARROW_RS_COALESCE: Accessors = policy_bytes!(ArrowRs, coalesce_bytes);
const ARROW_CPP_HOLE: Accessors = policy_bytes!(ArrowCpp, hole_size_limit_bytes);
const ARROW_CPP_RANGE: Accessors = policy_bytes!(ArrowCpp, range_size_limit_bytes);
const DUCKDB_GAP: Accessors = policy_bytes!(DuckDb, gap_bytes);
const VELOX_GAP: Accessors = policy_bytes!(Velox, max_gap_bytes);
const VELOX_QUANTUM: Accessors = policy_bytes!(Velox, load_quantum_bytes);
const VELOX_COALESCED: Accessors = policy_bytes!(Velox, max_coalesced_bytes);
const TRINO_MERGE: Accessors = policy_bytes!(Trino, max_merge_distance_bytes);
const TRINO_BUFFER: Accessors = policy_bytes!(Trino, max_buffer_size_bytes);
const HADOOP_SEEK: Accessors = policy_bytes!(HadoopS3a, min_seek_bytes);
const HADOOP_MERGED: Accessors = policy_bytes!(HadoopS3a, max_merged_bytes);
const POLARS_CHUNK: Accessors = policy_bytes!(Polars, chunk_size_bytes);

const READS_PER_FILE: Kind = Kind::Count {
    min: 0,
    max: MAX_THREADS,
    unlimited: false,
};

/// `max_concurrent_reads_per_file` of the strategy.
const READS_PER_FILE_FIELD: Accessors = (
    |s| Value::Count(u64::from(s.max_concurrent_reads_per_file)),
    |s, v| {
        if let Some(n) = count32(v) {
            s.max_concurrent_reads_per_file = n;
        }
    },
);

const ROW_GROUPS_AHEAD: Kind = Kind::Count {
    min: 0,
    max: u32::MAX as u64 - 1,
    unlimited: true,
};

/// `row_groups_ahead`, `unlimited` being `u32::MAX` in the strategy.
const ROW_GROUPS_AHEAD_FIELD: Accessors = (
    |s| {
        Value::Count(if s.row_groups_ahead == u32::MAX {
            u64::MAX
        } else {
            u64::from(s.row_groups_ahead)
        })
    },
    |s, v| {
        if let Some(n) = count(v) {
            s.row_groups_ahead = u32::try_from(n).unwrap_or(u32::MAX);
        }
    },
);

/// `POLARS_DOWNLOAD_CHUNK_SIZE_RANDOM_ACCESS` of a Polars strategy, as its reader takes it
/// (8 MiB, Polars' default, for a strategy without the Polars policy: only Polars honours the
/// settings that ask).
fn polars_chunk_bytes(s: &Strategy) -> u64 {
    s.peer_policy
        .as_ref()
        .and_then(crate::peer::polars_chunk_bytes)
        .unwrap_or(8 << 20)
}

/// Every setting, in listing order.
pub static SETTINGS: &[Setting] = &[
    Setting {
        name: "max_threads",
        kind: THREADS,
        doc: "streams (pipeline sources) reading the query's files in parallel",
        source: CH_THREADS,
        honoured: Honoured::CLICKHOUSE_MACHINERY,
        requires: Requires::Nothing,
        get: |s| Value::Count(u64::from(s.max_threads)),
        set: |s, v| {
            if let Some(n) = count32(v) {
                s.max_threads = n;
            }
        },
    },
    Setting {
        name: "max_parsing_threads",
        kind: THREADS,
        doc: "decode threads shared by all streams",
        source: CH_THREADS,
        honoured: Honoured::CLICKHOUSE_MACHINERY,
        requires: Requires::Nothing,
        get: |s| Value::Count(u64::from(s.max_parsing_threads)),
        set: |s, v| {
            if let Some(n) = count32(v) {
                s.max_parsing_threads = n;
            }
        },
    },
    Setting {
        name: "storage",
        kind: Kind::Choice(&["remote", "local"]),
        doc: "where the files live: picks min_bytes_for_seek (remote_read_min_bytes_for_seek or the local one)",
        source: CH_FORMAT,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Nothing,
        get: |s| {
            Value::Choice(match s.storage {
                Storage::Remote => "remote",
                Storage::Local => "local",
            })
        },
        set: |s, v| {
            s.storage = if v == Value::Choice("local") {
                Storage::Local
            } else {
                Storage::Remote
            }
        },
    },
    Setting {
        name: "max_download_threads",
        kind: THREADS,
        doc: "IO pool size of the base reader (ClickHouse default 4)",
        source: CH_SETTINGS,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Nothing,
        get: |s| Value::Count(u64::from(s.max_download_threads)),
        set: |s, v| {
            if let Some(n) = count32(v) {
                s.max_download_threads = n;
            }
        },
    },
    Setting {
        name: "input_format_parquet_max_io_threads",
        kind: THREADS_OR_ZERO,
        doc: "IO pool size when set; 0 = derive (max_download_threads, or R6's rule)",
        source: REDESIGN,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Nothing,
        get: |s| Value::Count(u64::from(s.max_io_threads)),
        set: |s, v| {
            if let Some(n) = count32(v) {
                s.max_io_threads = n;
            }
        },
    },
    Setting {
        name: "remote_read_min_bytes_for_seek",
        kind: SIZE,
        doc: "remote storage: a gap shorter than this is read rather than seeked over (4 MiB)",
        source: CH_SETTINGS,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Storage(Storage::Remote),
        get: |s| Value::Bytes(s.remote_read_min_bytes_for_seek),
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.remote_read_min_bytes_for_seek = b;
            }
        },
    },
    Setting {
        name: "input_format_parquet_local_file_min_bytes_for_seek",
        kind: SIZE,
        doc: "local files: the same seek threshold (8 KiB)",
        source: CH_FORMAT,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Storage(Storage::Local),
        get: |s| Value::Bytes(s.local_file_min_bytes_for_seek),
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.local_file_min_bytes_for_seek = b;
            }
        },
    },
    Setting {
        name: "input_format_parquet_coalesce_gap_bytes",
        kind: SIZE,
        doc: "R2: a gap shorter than this is bridged; the effective gap is min(this, min_bytes_for_seek), and 0 means min_bytes_for_seek",
        source: REDESIGN,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Mechanism(2),
        get: |s| Value::Bytes(s.coalesce_gap_bytes),
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.coalesce_gap_bytes = b;
            }
        },
    },
    Setting {
        name: "input_format_parquet_max_read_amplification",
        kind: Kind::Ratio {
            min: 0.0,
            max: f64::MAX,
            below: false,
            zero_or_at_least: Some(1.0),
        },
        doc: "R2: bound on read bytes / needed bytes per read (0 = none, else >= 1)",
        source: REDESIGN,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Mechanism(2),
        get: |s| Value::Ratio(s.max_read_amplification),
        set: |s, v| {
            if let Some(r) = ratio(v) {
                s.max_read_amplification = r;
            }
        },
    },
    Setting {
        name: "input_format_parquet_read_amplification_floor_bytes",
        kind: SIZE,
        doc: "R2: the ratio bound applies only to reads wasting more than this (0 = ratio alone)",
        source: REDESIGN,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Mechanism(2),
        get: |s| Value::Bytes(s.read_amplification_floor_bytes),
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.read_amplification_floor_bytes = b;
            }
        },
    },
    Setting {
        name: "input_format_parquet_bytes_per_read_task",
        kind: SIZE,
        doc: "how far one read task reaches past its first range; 0 = 4 x min_bytes_for_seek",
        source: REDESIGN,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Nothing,
        get: |s| Value::Bytes(s.bytes_per_read_task),
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.bytes_per_read_task = b;
            }
        },
    },
    Setting {
        name: "input_format_parquet_min_bytes_in_flight",
        kind: SIZE,
        doc: "R5: floor of the bytes-in-flight target; 0 disables planning (base issue order)",
        source: REDESIGN,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Mechanism(5),
        get: |s| Value::Bytes(s.min_bytes_in_flight),
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.min_bytes_in_flight = b;
            }
        },
    },
    Setting {
        name: "input_format_parquet_memory_high_watermark",
        kind: Kind::Bytes {
            min: 1,
            max: u64::MAX,
        },
        doc: "memory budget of the reader (base: five stages of 0.2 each; R4: three pools)",
        source: CH_FORMAT,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Nothing,
        get: |s| Value::Bytes(s.memory_high_watermark),
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.memory_high_watermark = b;
            }
        },
    },
    Setting {
        name: "input_format_parquet_memory_low_watermark",
        kind: SIZE,
        doc: "base: a charge smaller than a stage's share of this (0.2 / streams) is always admitted",
        source: CH_FORMAT,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::MechanismOff(4),
        get: |s| Value::Bytes(s.memory_low_watermark),
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.memory_low_watermark = b;
            }
        },
    },
    Setting {
        name: COMPRESSED_MEMORY_FRACTION,
        kind: Kind::Ratio {
            min: 0.0,
            max: 0.95,
            below: true,
            zero_or_at_least: None,
        },
        doc: "R4: share of the high watermark for compressed pages in flight (the Metadata pool keeps 0.05)",
        source: REDESIGN,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Mechanism(4),
        get: |s| Value::Ratio(s.compressed_memory_fraction),
        set: |s, v| {
            if let Some(r) = ratio(v) {
                s.compressed_memory_fraction = r;
            }
        },
    },
    Setting {
        name: "input_format_parquet_files_prefetch_ahead",
        kind: Kind::Count {
            min: 0,
            max: 1024,
            unlimited: false,
        },
        doc: "R9: files each stream pre-opens (footer and index reads) ahead of the current one",
        source: REDESIGN,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Mechanism(9),
        get: |s| Value::Count(u64::from(s.files_prefetch_ahead)),
        set: |s, v| {
            if let Some(n) = count32(v) {
                s.files_prefetch_ahead = n;
            }
        },
    },
    Setting {
        name: "input_format_parquet_parallel_subgroups",
        kind: Kind::Count {
            min: 1,
            max: 1024,
            unlimited: false,
        },
        doc: "R10: subgroups of one row group decoding at once",
        source: REDESIGN,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Mechanism(10),
        get: |s| Value::Count(u64::from(s.parallel_subgroups)),
        set: |s, v| {
            if let Some(n) = count32(v) {
                s.parallel_subgroups = n;
            }
        },
    },
    Setting {
        name: "input_format_parquet_use_offset_index",
        kind: Kind::Bool,
        doc: "read offset indexes and only the pages holding wanted rows",
        source: CH_FORMAT,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Nothing,
        get: |s| Value::Bool(s.use_offset_index),
        set: |s, v| {
            if let Some(b) = flag(v) {
                s.use_offset_index = b;
            }
        },
    },
    Setting {
        name: "row_group_buckets",
        kind: Kind::Bool,
        doc: "split each file's row groups into about max_threads buckets, one source each",
        source: BUCKETS,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::Nothing,
        get: |s| Value::Bool(s.row_group_buckets),
        set: |s, v| {
            if let Some(b) = flag(v) {
                s.row_group_buckets = b;
            }
        },
    },
    Setting {
        name: "row_group_buckets_min_row_groups",
        kind: THREADS,
        doc: "the fewest row groups a bucket holds",
        source: BUCKETS,
        honoured: Honoured::CLICKHOUSE,
        requires: Requires::RowGroupBuckets,
        get: |s| Value::Count(u64::from(s.row_group_buckets_min_row_groups)),
        set: |s, v| {
            if let Some(n) = count32(v) {
                s.row_group_buckets_min_row_groups = n;
            }
        },
    },
    switch!(0, "R1: serve a range as soon as the bytes before its end arrived"),
    switch!(1, "R2: gap rule plus amplification bound instead of lazy 4 MiB bridging"),
    switch!(2, "R3: the filesystem cache honours per-query alignment and background download"),
    switch!(3, "R4: Metadata / Compressed / Decoded pools; delivered chunks charged"),
    switch!(4, "R5: per-file issue queue bounded by a fitted bytes-in-flight target"),
    switch!(5, "R6: IO pool = max(max_download_threads, min(max_parsing_threads, 16))"),
    switch!(6, "R7: only reads running on an IO thread count as in flight"),
    switch!(7, "R8: coalesce through gaps the page cache already holds"),
    switch!(8, "R9: pre-open the next files of each stream"),
    switch!(9, "R10: decode several subgroups of a row group at once"),
    Setting {
        name: "max_concurrent_reads_per_file",
        kind: READS_PER_FILE,
        doc: "reads of one file running at once, 0 = unlimited (velox 0, trino 1)",
        source: SIMULATOR,
        honoured: Honoured(Honoured::of(Family::Velox).0 | Honoured::of(Family::Trino).0),
        requires: Requires::Nothing,
        get: READS_PER_FILE_FIELD.0,
        set: READS_PER_FILE_FIELD.1,
    },
    Setting {
        name: "fs.s3a.vectored.active.ranged.reads",
        kind: READS_PER_FILE,
        doc: "ranged reads of one stream downloading or queued at once (4); 0 = unlimited",
        source: "apache/hadoop hadoop-tools/hadoop-aws Constants.DEFAULT_AWS_S3_VECTOR_ACTIVE_RANGE_READS (3.4)",
        honoured: Honoured::of(Family::HadoopS3a),
        requires: Requires::Nothing,
        get: READS_PER_FILE_FIELD.0,
        set: READS_PER_FILE_FIELD.1,
    },
    Setting {
        name: "row_groups_ahead",
        kind: ROW_GROUPS_AHEAD,
        doc: "row groups fetched ahead of the first unfinished one; `unlimited` = memory decides",
        source: SIMULATOR,
        honoured: Honoured(Honoured::of(Family::Trino).0 | Honoured::of(Family::HadoopS3a).0),
        requires: Requires::Nothing,
        get: ROW_GROUPS_AHEAD_FIELD.0,
        set: ROW_GROUPS_AHEAD_FIELD.1,
    },
    Setting {
        name: "prefetch-rowgroups",
        kind: ROW_GROUPS_AHEAD,
        doc: "row groups loaded ahead of the one being read (1)",
        source: "facebookincubator/velox velox/connectors/hive/FileConfig.cpp prefetchRowGroups; ReaderBase::scheduleRowGroups in velox/dwio/parquet/reader/ParquetReader.cpp (4d16851, 2026-08)",
        honoured: Honoured::of(Family::Velox),
        requires: Requires::Nothing,
        get: ROW_GROUPS_AHEAD_FIELD.0,
        set: ROW_GROUPS_AHEAD_FIELD.1,
    },
    Setting {
        name: "footer-speculative-io-size",
        kind: Kind::Bytes {
            min: 8,
            max: u32::MAX as u64,
        },
        doc: "bytes of the footer tail read (256 KiB); a larger footer costs a second read of the part missing",
        source: "facebookincubator/velox velox/dwio/parquet/common/ParquetConfig.h footer-speculative-io-size; ReaderBase::loadFileMetaData in velox/dwio/parquet/reader/ParquetReader.cpp (4d16851, 2026-08)",
        honoured: Honoured::of(Family::Velox),
        requires: Requires::Nothing,
        get: |s| match s.footer {
            FooterRead::Tail(n) | FooterRead::TailThenWhole(n) => Value::Bytes(n),
            FooterRead::LengthThenMetadata => Value::Bytes(8),
        },
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.footer = FooterRead::Tail(b);
            }
        },
    },
    Setting {
        name: "file-preload-threshold",
        kind: SIZE,
        doc: "a file of at most max(this, footer-speculative-io-size) is fetched whole for its footer (8 MiB); its data is read again",
        source: "facebookincubator/velox velox/connectors/hive/FileConfig.cpp filePreloadThreshold; ReaderBase::loadFileMetaData in velox/dwio/parquet/reader/ParquetReader.cpp (4d16851, 2026-08)",
        honoured: Honoured::of(Family::Velox),
        requires: Requires::Nothing,
        get: |s| match s.whole_file {
            WholeFile::FooterOnly(n) | WholeFile::Served(n) => Value::Bytes(n),
            WholeFile::Never => Value::Bytes(0),
        },
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.whole_file = WholeFile::FooterOnly(b);
            }
        },
    },
    Setting {
        name: "parquet.small-file-threshold",
        kind: SIZE,
        doc: "a file of at most this is read whole in one request and its footer and data served from memory (3 MiB)",
        source: "trinodb/trino lib/trino-parquet ParquetReaderOptions DEFAULT_SMALL_FILE_THRESHOLD; plugin/trino-hive ParquetPageSourceFactory.createDataSource (476)",
        honoured: Honoured::of(Family::Trino),
        requires: Requires::Nothing,
        get: |s| match s.whole_file {
            WholeFile::FooterOnly(n) | WholeFile::Served(n) => Value::Bytes(n),
            WholeFile::Never => Value::Bytes(0),
        },
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.whole_file = WholeFile::Served(b);
            }
        },
    },
    Setting {
        name: "coalesce",
        kind: SIZE,
        doc: "object_store coalesce_ranges: ranges closer than this merge into one GET (1 MiB)",
        source: "apache/arrow-rs-object-store src/util.rs OBJECT_STORE_COALESCE_DEFAULT (0.14)",
        honoured: Honoured::of(Family::ArrowRs),
        requires: Requires::Nothing,
        get: ARROW_RS_COALESCE.0,
        set: ARROW_RS_COALESCE.1,
    },
    Setting {
        name: "OBJECT_STORE_COALESCE_PARALLEL",
        kind: Kind::Count { min: 1, max: 1 << 16, unlimited: false },
        doc: "object_store get_ranges: merged reads of one call fetched at once (10)",
        source: "apache/arrow-rs-object-store src/util.rs OBJECT_STORE_COALESCE_PARALLEL (0.14)",
        honoured: Honoured::of(Family::ArrowRs),
        requires: Requires::Nothing,
        get: |s| Value::Count(u64::from(s.peer.coalesce_parallel)),
        set: |s, v| {
            if let Some(n) = count32(v) {
                s.peer.coalesce_parallel = n;
            }
        },
    },
    Setting {
        name: HOLE_SIZE_LIMIT,
        kind: SIZE,
        doc: "ReadRangeCache: a larger gap starts a new read (8 KiB)",
        source: "apache/arrow cpp/src/arrow/io/caching.cc CacheOptions::LazyDefaults (25.0)",
        honoured: Honoured::of(Family::ArrowCpp),
        requires: Requires::PreBuffer,
        get: ARROW_CPP_HOLE.0,
        set: ARROW_CPP_HOLE.1,
    },
    Setting {
        name: RANGE_SIZE_LIMIT,
        kind: SIZE,
        doc: "ReadRangeCache: a merged read may not grow past this (32 MiB)",
        source: "apache/arrow cpp/src/arrow/io/caching.cc CacheOptions::LazyDefaults (25.0)",
        honoured: Honoured::of(Family::ArrowCpp),
        requires: Requires::PreBuffer,
        get: ARROW_CPP_RANGE.0,
        set: ARROW_CPP_RANGE.1,
    },
    Setting {
        name: "io_thread_count",
        kind: THREADS,
        doc: "Arrow's IO thread pool (pyarrow.set_io_thread_count, ARROW_IO_THREADS; 8)",
        source: "apache/arrow cpp/src/arrow/io/interfaces.cc kDefaultNumIoThreads (25.0)",
        honoured: Honoured::of(Family::ArrowCpp),
        requires: Requires::Nothing,
        get: |s| Value::Count(u64::from(s.peer.io_threads)),
        set: |s, v| {
            if let Some(n) = count32(v) {
                s.peer.io_threads = n;
            }
        },
    },
    Setting {
        name: PRE_BUFFER,
        kind: Kind::Bool,
        doc: "coalesce every column chunk of a file once and read them ahead on the IO pool (pyarrow read_table default)",
        source: "apache/arrow cpp/src/parquet/properties.h ArrowReaderProperties (25.0); pyarrow.parquet.read_table (26.0)",
        honoured: Honoured::of(Family::ArrowCpp),
        requires: Requires::Nothing,
        get: |s| Value::Bool(s.peer.pre_buffer),
        set: |s, v| {
            if let Some(b) = flag(v) {
                s.peer.pre_buffer = b;
            }
        },
    },
    Setting {
        name: CACHE_LAZY,
        kind: Kind::Bool,
        doc: "ReadRangeCache: a coalesced read is issued when first needed (true, the reader's LazyDefaults), or every one when the file is pre-buffered (false, as MakeFromNetworkMetrics returns)",
        source: "apache/arrow cpp/src/arrow/io/caching.cc CacheOptions::LazyDefaults, MakeFromNetworkMetrics, ReadRangeCache::LazyImpl; cpp/src/parquet/properties.h ArrowReaderProperties (25.0)",
        honoured: Honoured::of(Family::ArrowCpp),
        requires: Requires::PreBuffer,
        get: |s| Value::Bool(s.peer.lazy),
        set: |s, v| {
            if let Some(b) = flag(v) {
                s.peer.lazy = b;
            }
        },
    },
    Setting {
        name: CPU_COUNT,
        kind: THREADS,
        doc: "Arrow's CPU thread pool (pyarrow.set_cpu_count; the machine's cores): decodes, and without pre_buffer every read blocks one of its threads",
        source: "apache/arrow cpp/src/arrow/util/thread_pool.cc ThreadPool::DefaultCapacity (25.0)",
        honoured: Honoured::of(Family::ArrowCpp),
        requires: Requires::Nothing,
        get: |s| Value::Count(u64::from(s.peer.cpu_threads)),
        set: |s, v| {
            if let Some(n) = count32(v) {
                s.peer.cpu_threads = n;
            }
        },
    },
    Setting {
        name: "fragment_readahead",
        kind: THREADS,
        doc: "files the dataset scanner reads at once (4)",
        source: "apache/arrow cpp/src/arrow/dataset/scanner.h kDefaultFragmentReadahead (25.0)",
        honoured: Honoured::of(Family::ArrowCpp),
        requires: Requires::Nothing,
        get: |s| Value::Count(u64::from(s.peer.fragment_readahead)),
        set: |s, v| {
            if let Some(n) = count32(v) {
                s.peer.fragment_readahead = n;
            }
        },
    },
    Setting {
        name: "footer_read_size",
        kind: Kind::Bytes { min: 8, max: u32::MAX as u64 },
        doc: "bytes of the footer tail read (64 KiB); a larger metadata is read again whole",
        source: "apache/arrow cpp/src/parquet/properties.h kDefaultFooterReadSize (25.0)",
        honoured: Honoured::of(Family::ArrowCpp),
        requires: Requires::Nothing,
        get: |s| Value::Bytes(s.peer.footer_read_bytes),
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.peer.footer_read_bytes = b;
            }
        },
    },
    Setting {
        name: DUCKDB_THREADS,
        kind: THREADS,
        doc: "DuckDB worker threads (the machine's cores): each opens a file or reads one row group, its reads one after another",
        source: "duckdb/duckdb src/main/config.cpp (threads; 1.4.4)",
        honoured: Honoured::of(Family::DuckDb),
        requires: Requires::Nothing,
        get: |s| Value::Count(u64::from(s.peer.cpu_threads)),
        set: |s, v| {
            if let Some(n) = count32(v) {
                s.peer.cpu_threads = n;
            }
        },
    },
    Setting {
        name: "streaming_buffer_size",
        kind: Kind::Bytes { min: 1, max: u64::MAX },
        doc: "decoded bytes a streaming result (a client fetching, as Python does) buffers before the scan blocks (1,000,000)",
        source: "duckdb/duckdb src/include/duckdb/main/client_config.hpp, src/main/buffered_data/simple_buffered_data.cpp (1.4.4)",
        honoured: Honoured::of(Family::DuckDb),
        requires: Requires::Nothing,
        get: |s| Value::Bytes(s.peer.streaming_buffer_bytes),
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.peer.streaming_buffer_bytes = b;
            }
        },
    },
    Setting {
        name: "allow_gap",
        kind: SIZE,
        doc: "read heads closer than this merge (ALLOW_GAP, 16 KiB)",
        source: "duckdb/duckdb extension/parquet/include/thrift_tools.hpp (1.4.4)",
        honoured: Honoured::of(Family::DuckDb),
        requires: Requires::Nothing,
        get: DUCKDB_GAP.0,
        set: DUCKDB_GAP.1,
    },
    Setting {
        name: "max-coalesced-distance",
        kind: SIZE,
        doc: "DirectBufferedInput::groupRequests: a request joins its group across a gap shorter than this (512 KiB)",
        source: VELOX_FILE_CONFIG,
        honoured: Honoured::of(Family::Velox),
        requires: Requires::Nothing,
        get: VELOX_GAP.0,
        set: VELOX_GAP.1,
    },
    Setting {
        name: "load-quantum",
        kind: Kind::Bytes {
            min: 1,
            max: i32::MAX as u64,
        },
        doc: "the most one request counts towards a group, and the most of a group's last request its GET reads; the rest is read in GETs of this size (8 MiB)",
        source: VELOX_FILE_CONFIG,
        honoured: Honoured::of(Family::Velox),
        requires: Requires::Nothing,
        get: VELOX_QUANTUM.0,
        set: VELOX_QUANTUM.1,
    },
    Setting {
        name: "max-coalesced-bytes",
        kind: SIZE,
        doc: "the payload of one group of a prefetched load (128 MiB); Velox groups the loads of columns it has not yet seen read at load-quantum instead",
        source: VELOX_FILE_CONFIG,
        honoured: Honoured::of(Family::Velox),
        requires: Requires::Nothing,
        get: VELOX_COALESCED.0,
        set: VELOX_COALESCED.1,
    },
    Setting {
        name: "parquet.max-merge-distance",
        kind: SIZE,
        doc: "ranges closer than this merge (1 MB)",
        source: "trinodb/trino lib/trino-parquet AbstractParquetDataSource.java (476)",
        honoured: Honoured::of(Family::Trino),
        requires: Requires::Nothing,
        get: TRINO_MERGE.0,
        set: TRINO_MERGE.1,
    },
    Setting {
        name: "parquet.max-buffer-size",
        kind: SIZE,
        doc: "larger ranges are split into reads of this size (8 MB)",
        source: "trinodb/trino lib/trino-parquet AbstractParquetDataSource.java (476)",
        honoured: Honoured::of(Family::Trino),
        requires: Requires::Nothing,
        get: TRINO_BUFFER.0,
        set: TRINO_BUFFER.1,
    },
    Setting {
        name: "fs.s3a.vectored.read.min.seek.size",
        kind: SIZE,
        doc: "merge refused when the gap is at least this (128 KiB)",
        source: "apache/hadoop Constants.DEFAULT_AWS_S3_VECTOR_READS_MIN_SEEK_SIZE, 128 KiB since 3.4.2 (HADOOP-19229, PR #7281; 4,896 B in 3.4.0 and 3.4.1); VectoredReadUtils.mergeSortedRanges",
        honoured: Honoured::of(Family::HadoopS3a),
        requires: Requires::Nothing,
        get: HADOOP_SEEK.0,
        set: HADOOP_SEEK.1,
    },
    Setting {
        name: "fs.s3a.vectored.read.max.merged.size",
        kind: SIZE,
        doc: "largest merged read (2 MiB); a range parquet-java asks for is never split, whatever its length",
        source: "apache/hadoop Constants.DEFAULT_AWS_S3_VECTOR_READS_MAX_MERGED_READ_SIZE, 2 MiB since 3.4.2 (HADOOP-19229, PR #7281; 1,253,376 B in 3.4.0 and 3.4.1); VectoredReadUtils.mergeSortedRanges",
        honoured: Honoured::of(Family::HadoopS3a),
        requires: Requires::Nothing,
        get: HADOOP_MERGED.0,
        set: HADOOP_MERGED.1,
    },
    Setting {
        name: POLARS_CHUNK_SIZE,
        kind: SIZE,
        doc: "merged reads aim at this size and larger ones are split to it (8 MiB)",
        source: "pola-rs/polars crates/polars-io/src/cloud/polars_object_store.rs (2.1.0)",
        honoured: Honoured::of(Family::Polars),
        requires: Requires::Nothing,
        get: POLARS_CHUNK.0,
        set: POLARS_CHUNK.1,
    },
    Setting {
        name: POLARS_FOOTER_READ_SIZE,
        kind: Kind::Bytes { min: 8, max: u32::MAX as u64 },
        doc: "bytes of the footer's suffix read (256 KiB); a larger footer is read again whole",
        source: "pola-rs/polars crates/polars-io/src/parquet/read/ (2.1.0)",
        honoured: Honoured::of(Family::Polars),
        requires: Requires::Nothing,
        get: |s| Value::Bytes(s.peer.footer_read_bytes),
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.peer.footer_read_bytes = b;
            }
        },
    },
    Setting {
        name: POLARS_INFLIGHT_INIT_BYTE_BUDGET,
        kind: Kind::Bytes { min: 8 << 20, max: u64::MAX },
        doc: "the in-flight byte budget the adaptive controller starts from (max(ceil(POLARS_MAX_THREADS / 8), 4) x the chunk size: 32 MiB on 16 threads); each GET holds min(length, chunk size) of it, and it never falls under the chunk size",
        source: "pola-rs/polars crates/polars-io/src/cloud/concurrency/mod.rs get_init_byte_budget (2.1.0)",
        honoured: Honoured::of(Family::Polars),
        requires: Requires::Nothing,
        get: |s| Value::Bytes(s.peer.polars_init_bytes(polars_chunk_bytes(s))),
        set: |s, v| {
            if let Some(b) = bytes(v) {
                s.peer.inflight_init_bytes = Some(b);
            }
        },
    },
    Setting {
        name: POLARS_MAX_THREADS,
        kind: THREADS,
        doc: "Polars' compute threads (the machine's cores): row groups decode on them",
        source: "pola-rs/polars crates/polars-config (POLARS_MAX_THREADS; 2.1.0)",
        honoured: Honoured::of(Family::Polars),
        requires: Requires::Nothing,
        get: |s| Value::Count(u64::from(s.peer.cpu_threads)),
        set: |s, v| {
            if let Some(n) = count32(v) {
                s.peer.cpu_threads = n;
            }
        },
    },
    Setting {
        name: POLARS_RESOLVE_SAMPLE_LIMIT,
        kind: Kind::Count { min: 1, max: 1 << 20, unlimited: false },
        doc: "footers read at plan time at most, file 0 included (max(POLARS_MAX_THREADS, 16)): file 0 and an even stride of the others",
        source: "pola-rs/polars crates/polars-plan/src/plans/parquet_footers.rs footer_budget, crates/polars-io/src/pl_async.rs get_concurrency_limit (2.1.0)",
        honoured: Honoured::of(Family::Polars),
        requires: Requires::Nothing,
        get: |s| Value::Count(u64::from(s.peer.polars_sample_limit())),
        set: |s, v| {
            if let Some(n) = count32(v) {
                s.peer.resolve_sample_limit = Some(n);
            }
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The seek threshold of the other storage and the bucket size without buckets were
    /// reported as run with: they change nothing, so they are inert, and say why.
    #[test]
    fn storage_and_bucket_settings_apply_only_where_they_are_read() {
        let mut s = Strategy::preset("clickhouse-base").unwrap();
        let local = setting("input_format_parquet_local_file_min_bytes_for_seek").unwrap();
        let remote = setting("remote_read_min_bytes_for_seek").unwrap();
        let min_rg = setting("row_group_buckets_min_row_groups").unwrap();
        assert!(remote.applies_to(&s) && !local.applies_to(&s));
        assert!(local.inert_because(&s).unwrap().contains("storage = local"));
        assert!(min_rg
            .inert_because(&s)
            .unwrap()
            .contains("row_group_buckets is off"));
        s.set("storage", "local").unwrap();
        s.set("row_group_buckets", "true").unwrap();
        assert!(local.applies_to(&s) && !remote.applies_to(&s));
        assert!(remote
            .inert_because(&s)
            .unwrap()
            .contains("this arm's storage is local"));
        assert!(min_rg.applies_to(&s));
    }

    #[test]
    fn mechanism_settings_apply_only_with_their_mechanism() {
        let base = Strategy::preset("clickhouse-base").unwrap();
        let redesign = Strategy::preset("clickhouse-redesign").unwrap();
        let gap = setting("input_format_parquet_coalesce_gap_bytes").unwrap();
        assert!(gap.honoured_by(&base) && !gap.applies_to(&base));
        assert!(gap.inert_because(&base).unwrap().contains("R2"));
        assert!(gap.applies_to(&redesign));
        let low = setting("input_format_parquet_memory_low_watermark").unwrap();
        assert!(low.applies_to(&base) && !low.applies_to(&redesign));
    }

    #[test]
    fn names_are_unique_and_documented() {
        let mut names: Vec<&str> = SETTINGS.iter().map(|s| s.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a setting is declared twice");
        for s in SETTINGS {
            assert!(!s.doc.is_empty() && !s.source.is_empty(), "{}", s.name);
        }
    }

    #[test]
    fn kinds_parse_what_they_should_and_say_what_is_right() {
        assert_eq!(THREADS.parse("8"), Ok(Value::Count(8)));
        assert!(THREADS
            .parse("0")
            .unwrap_err()
            .expected
            .contains("at least 1"));
        assert!(THREADS
            .parse("100000")
            .unwrap_err()
            .expected
            .contains("at most"));
        assert_eq!(SIZE.parse("2MiB"), Ok(Value::Bytes(2 << 20)));
        assert!(SIZE.parse("4").unwrap_err().why.contains("unit"));
        let amp = setting("input_format_parquet_max_read_amplification").unwrap();
        assert_eq!(amp.kind.parse("0"), Ok(Value::Ratio(0.0)));
        assert!(amp.kind.parse("0.5").unwrap_err().expected.contains(">= 1"));
        let frac = setting(COMPRESSED_MEMORY_FRACTION).unwrap();
        assert!(frac
            .kind
            .parse("0.97")
            .unwrap_err()
            .expected
            .contains("0.95"));
        assert!(frac.kind.parse("-0.1").is_err());
        let rga = setting("row_groups_ahead").unwrap();
        assert_eq!(rga.kind.parse("unlimited"), Ok(Value::Count(u64::MAX)));
        assert_eq!(Value::Count(u64::MAX).text(), "unlimited");
        for b in [0, 1, 3_000_000, 1 << 20, 3 << 19, 48 << 10, u64::MAX / 3] {
            let t = Value::Bytes(b).text();
            assert_eq!(SIZE.parse(&t), Ok(Value::Bytes(b)), "{b} as {t}");
        }
        assert!(Kind::Bool
            .parse("maybe")
            .unwrap_err()
            .expected
            .contains("true or false"));
        assert!(setting("storage")
            .unwrap()
            .kind
            .parse("tape")
            .unwrap_err()
            .expected
            .contains("remote"));
    }
}
