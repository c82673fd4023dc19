//! `sim eval`: one point of `sim tune`'s search as JSON; its objective is the tuner's for the
//! same settings, the memory cap included; bad settings are clear errors.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;
use common::*;
use experiments::tune::{parse_param, targets, tune, Objective, TuneOptions};
use std::process::Command;

fn scenario_file(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("small.yaml");
    std::fs::write(&p, small(6, 4, "")).unwrap();
    p
}

fn eval(args: &[&str]) -> (bool, serde_json::Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .arg("eval")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let v = serde_json::from_str(&stdout).unwrap_or(serde_json::Value::Null);
    (out.status.success(), v, stderr)
}

#[test]
fn eval_gives_the_tuner_s_objective_for_the_same_settings() {
    let dir = tempfile::tempdir().unwrap();
    let path = scenario_file(dir.path());
    let loaded = vec![scenario::load(&path, &[]).unwrap()];
    let t = targets(&loaded, Some("redesign")).unwrap();
    let opts = TuneOptions {
        params: vec![
            parse_param("input_format_parquet_coalesce_gap_bytes=16KiB..16MiB:log").unwrap(),
        ],
        objective: Objective::Time,
        max_memory_bytes: None,
        budget: 6,
        seed: 2,
        arm: Some("redesign".into()),
        reps: Some(1),
        progress: false,
    };
    let r = tune(&t, &opts).unwrap();
    let mut distinct = std::collections::BTreeSet::new();
    for (e, _) in &r.history {
        let settings: serde_json::Map<String, serde_json::Value> = e
            .settings
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect();
        let json = serde_json::Value::Object(settings).to_string();
        let p = path.display().to_string();
        let (ok, v, err) = eval(&[&p, "--settings", &json, "--arm", "redesign", "--reps", "1"]);
        assert!(ok, "{err}");
        let got = v["objective"].as_f64().unwrap();
        assert!(
            (got - e.objective).abs() <= 1e-12 * e.objective.abs(),
            "{json}: eval {got}, tune {}",
            e.objective
        );
        assert_eq!(v["feasible"], true);
        assert_eq!(v["scenarios"][0]["arm"], "redesign");
        distinct.insert(format!("{got:.9}"));
    }
    // The settings change the objective (so equality above is not trivially true).
    assert!(distinct.len() > 1, "{distinct:?}");
}

#[test]
fn over_the_memory_cap_is_infeasible_and_worse_than_any_feasible_point() {
    let dir = tempfile::tempdir().unwrap();
    let p = scenario_file(dir.path()).display().to_string();
    let s = r#"{"input_format_parquet_coalesce_gap_bytes": "1MiB"}"#;
    let (ok, v, err) = eval(&[
        &p,
        "--settings",
        s,
        "--arm",
        "redesign",
        "--reps",
        "1",
        "--max-memory",
        "1KiB",
    ]);
    assert!(ok, "{err}");
    assert_eq!(v["feasible"], false);
    assert!(v["objective"].as_f64().unwrap() >= 1e3, "{v}");
    let (ok, v, err) = eval(&[&p, "--settings", s, "--arm", "redesign", "--reps", "1"]);
    assert!(ok, "{err}");
    assert_eq!(v["feasible"], true);
    assert!(v["objective"].as_f64().unwrap() < 1e3, "{v}");
}

#[test]
fn bad_settings_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = scenario_file(dir.path()).display().to_string();
    for (settings, says) in [
        ("not json", "is not JSON"),
        ("[1, 2]", "must be a JSON object"),
        (r#"{"no_such_setting": 1}"#, "is not a setting"),
        (
            r#"{"input_format_parquet_coalesce_gap_bytes": [1]}"#,
            "give a string, number or boolean",
        ),
        (
            r#"{"input_format_parquet_coalesce_gap_bytes": "4 apples"}"#,
            "unknown unit",
        ),
    ] {
        let (ok, _, err) = eval(&[&p, "--settings", settings]);
        assert!(!ok, "{settings}");
        assert!(err.contains(says), "{settings}: {err}");
    }
}

#[test]
fn tune_history_lists_every_evaluation_with_the_best_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let p = scenario_file(dir.path()).display().to_string();
    let hist = dir.path().join("h.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["tune", &p, "--param"])
        .arg("input_format_parquet_coalesce_gap_bytes=16KiB..16MiB:log")
        .args([
            "--budget",
            "8",
            "--arm",
            "redesign",
            "--reps",
            "1",
            "--history",
        ])
        .arg(&hist)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n: usize = stdout
        .strip_prefix("# best of ")
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    let text = std::fs::read_to_string(&hist).unwrap();
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(
        rdr.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "evaluation",
            "objective",
            "search_objective",
            "best_so_far",
            "feasible",
            "input_format_parquet_coalesce_gap_bytes"
        ]
    );
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), n);
    let mut best = f64::INFINITY;
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[0].parse::<usize>().unwrap(), i + 1);
        // No memory cap: every evaluation is feasible and the search saw what was measured.
        assert_eq!(&r[4], "true");
        assert_eq!(r[1].parse::<f64>().unwrap(), r[2].parse::<f64>().unwrap());
        best = best.min(r[1].parse::<f64>().unwrap());
        assert_eq!(r[3].parse::<f64>().unwrap(), best, "row {}", i + 1);
    }
}
