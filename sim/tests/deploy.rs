//! `deploy/`: the scripts a Kubernetes Indexed Job and a Slurm job array run, called as each
//! scheduler calls them (its environment variables set here), merged into the one-machine CSV;
//! and the manifests agree with the scripts on the shard count and the shared directory.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

const VARY: [&str; 4] = [
    "--vary",
    "input_format_parquet_coalesce_gap_bytes=256KiB..4MiB:x4",
    "--vary",
    "store.first_byte.median=10ms,40ms",
];

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sim-deploy-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn scenario(d: &Path) -> PathBuf {
    let p = d.join("small.yaml");
    std::fs::write(&p, small(2, 2, "")).unwrap();
    p
}

/// A script of `deploy/` with only `env` besides PATH and HOME (as a scheduler's task starts).
fn script(name: &str, args: &[&str], env: &[(&str, String)]) -> std::process::Output {
    let mut c = Command::new("bash");
    c.arg(repo().join("deploy").join(name))
        .args(args)
        .env_clear();
    for k in ["PATH", "HOME"] {
        if let Ok(v) = std::env::var(k) {
            c.env(k, v);
        }
    }
    c.env("SIM", env!("CARGO_BIN_EXE_sim"));
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn ok(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    err
}

fn one_machine(d: &Path, scenario: &Path) -> String {
    let out = d.join("one.csv");
    let o = Command::new(env!("CARGO_BIN_EXE_sim"))
        .arg("sweep")
        .arg(scenario)
        .args(VARY)
        .args(["--reps", "1", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    ok(&o);
    std::fs::read_to_string(out).unwrap()
}

fn args(scenario: &Path) -> Vec<String> {
    let mut a = vec![scenario.display().to_string()];
    a.extend(VARY.iter().map(|s| s.to_string()));
    a.extend(["--reps".into(), "1".into()]);
    a
}

fn merged(d: &Path, results: &Path, shards: usize) -> String {
    let out = d.join("merged.csv");
    let o = script(
        "merge-shards",
        &[&out.display().to_string()],
        &[
            ("SIM_SHARDS", shards.to_string()),
            ("SIM_RESULTS_DIR", results.display().to_string()),
        ],
    );
    ok(&o);
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn an_indexed_job_s_pods_and_the_merge_give_the_one_machine_csv() {
    let d = dir("k8s");
    let s = scenario(&d);
    let results = d.join("results");
    let a = args(&s);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    for index in 0..3 {
        let o = script(
            "run-shard",
            &a,
            &[
                ("JOB_COMPLETION_INDEX", index.to_string()),
                ("SIM_SHARDS", "3".into()),
                ("SIM_RESULTS_DIR", results.display().to_string()),
            ],
        );
        ok(&o);
        assert!(results.join(format!("part-{index}-of-3.csv")).exists());
    }
    assert_eq!(merged(&d, &results, 3), one_machine(&d, &s));

    // A retried pod resumes its part: complete points kept, the rest run, the same bytes.
    let part = results.join("part-1-of-3.csv");
    let full = std::fs::read_to_string(&part).unwrap();
    let cut: Vec<&str> = full.lines().take(5).collect();
    std::fs::write(&part, cut.join("\n") + "\n").unwrap();
    let o = script(
        "run-shard",
        &a,
        &[
            ("JOB_COMPLETION_INDEX", "1".into()),
            ("SIM_SHARDS", "3".into()),
            ("SIM_RESULTS_DIR", results.display().to_string()),
        ],
    );
    let err = ok(&o);
    assert!(err.contains("1 kept from before"), "{err}");
    assert_eq!(std::fs::read_to_string(&part).unwrap(), full);
}

#[test]
fn a_slurm_array_from_any_first_index_and_the_merge_give_the_one_machine_csv() {
    let d = dir("slurm");
    let s = scenario(&d);
    let results = d.join("results");
    let a = args(&s);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    // `--array=1-4`: SLURM_ARRAY_TASK_ID 1..4, the count from SLURM_ARRAY_TASK_COUNT.
    for id in 1..=4 {
        let o = script(
            "run-shard",
            &a,
            &[
                ("SLURM_ARRAY_TASK_ID", id.to_string()),
                ("SLURM_ARRAY_TASK_MIN", "1".into()),
                ("SLURM_ARRAY_TASK_COUNT", "4".into()),
                ("SIM_RESULTS_DIR", results.display().to_string()),
            ],
        );
        ok(&o);
    }
    let mut names: Vec<String> = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "part-0-of-4.csv",
            "part-1-of-4.csv",
            "part-2-of-4.csv",
            "part-3-of-4.csv"
        ]
    );
    assert_eq!(merged(&d, &results, 4), one_machine(&d, &s));
}

#[test]
fn a_task_without_its_scheduler_s_index_is_refused() {
    let d = dir("noindex");
    let s = scenario(&d);
    let o = script(
        "run-shard",
        &[&s.display().to_string()],
        &[
            ("SIM_SHARDS", "3".into()),
            ("SIM_RESULTS_DIR", d.display().to_string()),
        ],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("JOB_COMPLETION_INDEX") && err.contains("SLURM_ARRAY_TASK_ID"),
        "{err}"
    );
}

fn yaml(path: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(repo().join(path)).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

fn container_env(job: &serde_json::Value, name: &str) -> String {
    let env = &job["spec"]["template"]["spec"]["containers"][0]["env"];
    env.as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .and_then(|e| e["value"].as_str())
        .unwrap_or_else(|| panic!("no {name}"))
        .to_string()
}

#[test]
fn the_manifests_agree_with_the_scripts() {
    let job = yaml("deploy/kubernetes/sweep-job.yaml");
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert!(spec["backoffLimitPerIndex"].as_u64().is_some());
    let shards = container_env(&job, "SIM_SHARDS");
    assert_eq!(spec["completions"].as_u64().unwrap().to_string(), shards);
    let c = &spec["template"]["spec"]["containers"][0];
    assert_eq!(c["command"][0], "run-shard");
    let merge = yaml("deploy/kubernetes/merge-job.yaml");
    assert_eq!(container_env(&merge, "SIM_SHARDS"), shards);
    assert_eq!(
        container_env(&merge, "SIM_RESULTS_DIR"),
        container_env(&job, "SIM_RESULTS_DIR")
    );
    assert_eq!(
        merge["spec"]["template"]["spec"]["containers"][0]["command"][0],
        "merge-shards"
    );

    // Slurm: the array's size is the shard count both batch scripts default to.
    let sweep = std::fs::read_to_string(repo().join("deploy/slurm/sweep.sbatch")).unwrap();
    let array = sweep
        .lines()
        .find_map(|l| l.strip_prefix("#SBATCH --array="))
        .unwrap();
    let (lo, hi) = array.split_once('-').unwrap();
    let size = hi.parse::<u32>().unwrap() - lo.parse::<u32>().unwrap() + 1;
    let merge = std::fs::read_to_string(repo().join("deploy/slurm/merge.sbatch")).unwrap();
    for text in [&sweep, &merge] {
        assert!(
            text.contains(&format!("SIM_SHARDS=\"${{SIM_SHARDS:-{size}}}\"")),
            "{text}"
        );
    }
}
