//! The two shapes the check reads, scaled so that a measured run takes 1-6 s and the bed (about
//! 500 MiB/s on two cores) is never the bottleneck: the streams times the paced bandwidth stays
//! far below it. Each shape writes real Parquet files with the `parquet` crate's writer (through
//! `testbed`), records them as `sim record` does, and gives the scenario that both `sim run` and
//! `sim measure` read.

use std::path::{Path, PathBuf};
use testbed::{LargeFileShape, SmallFilesShape};

/// One of the shipped scenarios' shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shape {
    /// `many-small-files`: wide files (437 columns) of one row group, footers past a 64 KiB tail
    /// read, five columns read.
    ManySmallFiles,
    /// `single-large-file`: one file of many row groups, six of 24 columns read.
    OneLargeFile,
}

impl Shape {
    pub const ALL: [Shape; 2] = [Shape::ManySmallFiles, Shape::OneLargeFile];

    /// The name used in keys, file names and the table.
    pub fn name(self) -> &'static str {
        match self {
            Shape::ManySmallFiles => "many-small-files",
            Shape::OneLargeFile => "one-large-file",
        }
    }

    /// Parses a name as [`Shape::name`] writes it.
    pub fn from_name(name: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|s| s.name() == name)
    }

    /// What the files are, for the README.
    pub fn describe(self) -> String {
        match self {
            Shape::ManySmallFiles => format!(
                "{SMALL_FILES} files of 437 columns, 256 KiB-1 MiB of data each, footers about \
                 75 KiB; 5 columns read; {SMALL_STREAMS} streams"
            ),
            Shape::OneLargeFile => format!(
                "1 file of {LARGE_ROW_GROUPS} row groups of 1 MiB, 24 columns; 6 columns read; \
                 {LARGE_STREAMS} streams"
            ),
        }
    }

    /// Connections opened before measuring, so that no arm pays connection set-up the model
    /// does not have: one a stream.
    pub fn warm_connections(self) -> u32 {
        self.streams()
    }

    fn streams(self) -> u32 {
        match self {
            Shape::ManySmallFiles => SMALL_STREAMS,
            Shape::OneLargeFile => LARGE_STREAMS,
        }
    }

    fn query_columns(self) -> &'static [usize] {
        match self {
            Shape::ManySmallFiles => &SMALL_QUERY_COLUMNS,
            Shape::OneLargeFile => &[0, 2, 5, 9, 14, 20],
        }
    }

    /// Writes the shape's Parquet files into `dir` (created if missing); returns their paths.
    pub fn write_files(self, dir: &Path) -> Result<Vec<PathBuf>, testbed::TestBedError> {
        match self {
            Shape::ManySmallFiles => testbed::write_many_small_files(
                dir,
                SMALL_FILES,
                &SmallFilesShape {
                    min_file_bytes: 256 * 1024,
                    max_file_bytes: 1024 * 1024,
                    wide_columns: SMALL_QUERY_COLUMNS.to_vec(),
                    ..SmallFilesShape::default()
                },
            ),
            Shape::OneLargeFile => testbed::write_one_large_file(
                dir,
                &LargeFileShape {
                    row_groups: LARGE_ROW_GROUPS,
                    row_group_bytes: 1024 * 1024,
                    ..LargeFileShape::default()
                },
            )
            .map(|p| vec![p]),
        }
    }

    /// The scenario over the recorded layout at `layout_file` (a path relative to the
    /// scenario's directory), with `store_yaml` (a YAML mapping) as its store model and one arm
    /// per strategy preset (named by [`arm_name`]).
    pub fn scenario_yaml(
        self,
        layout_file: &str,
        store_yaml: &str,
        strategies: &[String],
    ) -> String {
        let columns: Vec<String> = self.query_columns().iter().map(|c| c.to_string()).collect();
        let store: String = store_yaml.lines().map(|l| format!("  {l}\n")).collect();
        let arms: String = strategies
            .iter()
            .map(|s| format!("  - name: {}\n    strategy: {s}\n", arm_name(s)))
            .collect();
        format!(
            "name: s3check-{name}\nseed: 1\ntable:\n  layout: {layout_file}\nquery:\n  columns: \
             [{columns}]\nstore:\n{store}settings:\n  max_threads: {streams}\n  \
             max_parsing_threads: {streams}\narms:\n{arms}",
            name = self.name(),
            columns = columns.join(", "),
            streams = self.streams(),
        )
    }
}

/// The strategies checked by default: both ClickHouse generations.
pub const DEFAULT_STRATEGIES: [&str; 2] = ["clickhouse-base", "clickhouse-redesign"];

/// An arm's name: `base` and `redesign` for the ClickHouse generations, else the preset's name.
pub fn arm_name(strategy: &str) -> &str {
    strategy.strip_prefix("clickhouse-").unwrap_or(strategy)
}

/// Files of the many-small-files shape.
const SMALL_FILES: usize = 48;
/// The columns the small-files query reads, made six times the median width as in the scenario.
const SMALL_QUERY_COLUMNS: [usize; 5] = [100, 101, 110, 119, 121];
/// Streams (`max_threads`) on the small files.
const SMALL_STREAMS: u32 = 8;
/// Row groups of the large file.
const LARGE_ROW_GROUPS: usize = 48;
/// Streams (`max_threads`) on the large file.
const LARGE_STREAMS: u32 = 16;

/// The store model of what the proxy injects: a constant round trip to the first byte, each
/// connection paced to `bandwidth_bytes_per_s`, nothing else (no retries: the bed does not fail).
pub fn injected_store_yaml(rtt_ns: u64, bandwidth_bytes_per_s: u64) -> String {
    // Readable units when they say the value exactly, else the raw value.
    let rtt = Some(units::format_duration_ns(rtt_ns))
        .filter(|t| units::parse_duration_ns(t) == Ok(rtt_ns))
        .unwrap_or_else(|| format!("{rtt_ns}ns"));
    let bw = Some(units::format_bandwidth(bandwidth_bytes_per_s as f64))
        .filter(|t| units::parse_bandwidth(t) == Ok(bandwidth_bytes_per_s as f64))
        .unwrap_or_else(|| format!("{bandwidth_bytes_per_s}B/s"));
    format!(
        "name: injected-{rtt}\nfirst_byte: {{ distribution: constant, value: {rtt} }}\n\
         stream_bandwidth: {{ distribution: constant, value: {bw} }}\nnic: 100GiB/s\n\
         retry: {{ max_attempts: 1, backoff_initial: 25ms, backoff_max: 1s }}\n\
         price: {{ per_1000_gets_usd: 0.0004 }}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scenarios_load_with_the_injected_model() {
        let dir = tempfile::tempdir().unwrap();
        for shape in Shape::ALL {
            let strategies: Vec<String> =
                DEFAULT_STRATEGIES.iter().map(|s| s.to_string()).collect();
            let text = shape.scenario_yaml(
                "x.layout",
                &injected_store_yaml(30_000_000, 10 << 20),
                &strategies,
            );
            let path = dir.path().join(format!("{}.yaml", shape.name()));
            std::fs::write(&path, &text).unwrap();
            let loaded = scenario::load(&path, &[]).unwrap();
            assert_eq!(loaded.file.arms.len(), 2, "{text}");
            assert!(
                text.contains("name: base\n    strategy: clickhouse-base"),
                "{text}"
            );
            assert!(
                text.contains("name: redesign\n    strategy: clickhouse-redesign"),
                "{text}"
            );
            assert!(text.contains("value: 30ms"), "{text}");
            assert!(text.contains("value: 10MiB/s"), "{text}");
            assert_eq!(Shape::from_name(shape.name()), Some(shape));
        }
    }

    #[test]
    fn peer_presets_get_an_arm_each_named_by_the_preset() {
        let dir = tempfile::tempdir().unwrap();
        let strategies = vec!["arrow-rs".to_string(), "clickhouse-redesign".to_string()];
        let text = Shape::OneLargeFile.scenario_yaml(
            "x.layout",
            &injected_store_yaml(30_000_000, 10 << 20),
            &strategies,
        );
        let path = dir.path().join("s.yaml");
        std::fs::write(&path, &text).unwrap();
        let loaded = scenario::load(&path, &[]).unwrap();
        let names: Vec<&str> = loaded.file.arms.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["arrow-rs", "redesign"], "{text}");
        assert_eq!(arm_name("clickhouse-base"), "base");
        assert_eq!(arm_name("duckdb"), "duckdb");
    }
}
