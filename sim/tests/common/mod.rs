//! Helpers shared by the scenario-level tests.
#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use experiments::report::{Metric, Report};
use experiments::run::{run_scenario, RunOptions, ScenarioOutput};
use scenario::{self, LoadedScenario, ScenarioError};
use std::path::{Path, PathBuf};

/// The repository root (tests run with the crate directory as cwd).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn parse(text: &str) -> Result<LoadedScenario, ScenarioError> {
    scenario::parse(&repo().join("scenarios/test.yaml"), text, &[])
}

/// A scenario from text, with `--set` overrides.
pub fn parse_with(text: &str, set: &[&str]) -> LoadedScenario {
    let ovs: Vec<_> = set
        .iter()
        .map(|s| scenario::parse_override(s).expect("override"))
        .collect();
    scenario::parse(&repo().join("scenarios/test.yaml"), text, &ovs)
        .unwrap_or_else(|e| panic!("{e}"))
}

pub fn load(name: &str, set: &[&str]) -> LoadedScenario {
    let ovs: Vec<_> = set
        .iter()
        .map(|s| scenario::parse_override(s).expect("override"))
        .collect();
    scenario::load(&repo().join("scenarios").join(name), &ovs).unwrap_or_else(|e| panic!("{e}"))
}

pub fn run(loaded: &LoadedScenario, opts: &RunOptions) -> ScenarioOutput {
    run_scenario(loaded, opts).unwrap_or_else(|e| panic!("{e}"))
}

pub fn run_text(text: &str) -> Report {
    let l = parse(text).unwrap_or_else(|e| panic!("{e}"));
    run(&l, &RunOptions::default()).report
}

/// Mean of a metric for an arm in a case.
pub fn metric(r: &Report, case: &str, arm: &str, metric: Metric) -> f64 {
    let c = r.case(case).unwrap_or_else(|| panic!("no case {case}"));
    let a = c
        .arms
        .iter()
        .find(|a| a.arm == arm)
        .unwrap_or_else(|| panic!("no arm {arm}"));
    a.mean(metric)
}

/// A small scenario: `files` files of `rgs` row groups, 8 columns; arms base and redesign.
pub fn small(files: u32, rgs: u32, extra: &str) -> String {
    format!(
        r#"
name: small
seed: 3
table:
  generate:
    file_count: {files}
    row_groups_per_file: {rgs}
    row_group_size: 2MiB
    rows_per_row_group: 10000
    columns: {{ count: 8 }}
query:
  columns: [1, 3, 6]
store: s3-standard
settings:
  max_threads: 4
  max_parsing_threads: 4
arms:
  - name: base
    strategy: clickhouse-base
  - name: redesign
    strategy: clickhouse-redesign
{extra}
"#
    )
}
