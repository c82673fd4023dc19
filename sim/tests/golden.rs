//! Every shipped scenario's report, byte for byte, against the one committed in
//! `tests/golden/` (CSV: every metric of every arm of every case, at full precision). A change
//! that moves a figure on purpose regenerates them with `scripts/update-golden` and says why in
//! its commit; any other change must leave them as they are.

mod common;

use common::repo;
use experiments::run::{run_scenario, RunOptions};

#[test]
fn every_shipped_scenario_reports_what_is_committed() {
    let mut scenarios: Vec<_> = std::fs::read_dir(repo().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    scenarios.sort();
    assert!(scenarios.len() >= 6, "{scenarios:?}");
    let mut differ = Vec::new();
    for path in &scenarios {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let loaded = scenario::load(path, &[]).unwrap_or_else(|e| panic!("{e}"));
        let out = run_scenario(&loaded, &RunOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let csv = out.report.to_csv().unwrap();
        let golden_path = repo().join("tests/golden").join(format!("{name}.csv"));
        let golden = std::fs::read_to_string(&golden_path)
            .unwrap_or_else(|e| panic!("{}: {e}", golden_path.display()));
        if csv != golden {
            let first = csv
                .lines()
                .zip(golden.lines())
                .find(|(a, b)| a != b)
                .map(|(a, b)| format!("now:    {a}\ngolden: {b}"))
                .unwrap_or_else(|| "(one is a prefix of the other)".into());
            differ.push(format!("{name}:\n{first}"));
        }
    }
    assert!(
        differ.is_empty(),
        "reports differ from tests/golden (run scripts/update-golden if the change is on \
         purpose, and say why):\n{}",
        differ.join("\n")
    );
}
