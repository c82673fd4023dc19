//! The `sim` binary on arguments a user gets wrong: each is a clear error or note, never a
//! panic, a silent default or a mixed-up result.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;
use common::repo;
use std::io::Read;
use std::process::{Command, Stdio};

fn sim() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sim"));
    c.current_dir(repo());
    c
}

/// Runs `sim args`, returning (success, stdout, stderr).
fn run(args: &[&str]) -> (bool, String, String) {
    let out = sim().args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

const SMALL: &str = "scenarios/single-large-file.yaml";

#[test]
fn a_closed_stdout_ends_quietly_with_status_zero() {
    let mut child = sim()
        .args(["run", SMALL, "--case", "control-200-files", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The pipe closes here, as `| head -c 10` closes it.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn threads_beyond_the_machine_are_refused_with_why() {
    let (ok, _, err) = run(&["run", SMALL, "--threads", "100000"]);
    assert!(!ok);
    assert!(err.contains("cores") && err.contains("at most"), "{err}");
    let (ok, _, err) = run(&["run", SMALL, "--threads", "0"]);
    assert!(!ok && err.contains("--threads 0"), "{err}");
}

#[test]
fn zero_replications_and_budgets_are_errors() {
    let (ok, _, err) = run(&["run", SMALL, "--reps", "0"]);
    assert!(!ok && err.contains("--reps 0"), "{err}");
    let (ok, _, err) = run(&[
        "tune",
        SMALL,
        "--param",
        "input_format_parquet_coalesce_gap_bytes=64KiB..4MiB",
        "--budget",
        "0",
    ]);
    assert!(!ok && err.contains("--budget 0"), "{err}");
    let (ok, _, err) = run(&[
        "tune",
        SMALL,
        "--param",
        "input_format_parquet_coalesce_gap_bytes=64KiB..4MiB",
        "--param",
        "input_format_parquet_coalesce_gap_bytes=1MiB..8MiB",
    ]);
    assert!(!ok && err.contains("twice"), "{err}");
}

#[test]
fn an_empty_column_list_fails_validate_as_it_fails_run() {
    let text = std::fs::read_to_string(repo().join(SMALL)).unwrap();
    let start = text.find("  columns: [").unwrap();
    let end = start + text[start..].find('\n').unwrap();
    let bad = format!("{}  columns: []{}", &text[..start], &text[end..]);
    let path = repo()
        .join("scenarios")
        .join(format!(".cli-test-{}.yaml", std::process::id()));
    std::fs::write(&path, bad).unwrap();
    let p = path.to_str().unwrap();
    let (v_ok, _, v_err) = run(&["validate", p]);
    let (r_ok, _, r_err) = run(&["run", p]);
    std::fs::remove_file(&path).unwrap();
    assert!(!v_ok && v_err.contains("columns"), "{v_err}");
    assert!(!r_ok && r_err.contains("columns"), "{r_err}");
}

#[test]
fn recording_where_every_file_is_skipped_is_an_error() {
    let not_parquet = tmp("not.parquet");
    std::fs::write(&not_parquet, b"this is not a parquet file").unwrap();
    let out = tmp("none.layout");
    let (ok, _, err) = run(&[
        "record",
        "parquet",
        not_parquet.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!ok && err.contains("no file could be recorded"), "{err}");
    assert!(!out.exists(), "nothing was written");
}

#[test]
fn a_setting_that_reaches_no_arm_is_an_error_and_a_partial_one_a_note() {
    let (ok, _, err) = run(&["run", SMALL, "--set", "allow_gap=1MiB"]);
    assert!(!ok && err.contains("applies to no arm"), "{err}");
    let (ok, _, err) = run(&[
        "run",
        SMALL,
        "--case",
        "control-200-files",
        "--set",
        "input_format_parquet_coalesce_gap_bytes=1MiB",
    ]);
    assert!(ok, "{err}");
    assert!(
        err.contains("note:") && err.contains("R2, which is off"),
        "{err}"
    );
}

/// A `sim run --trace` file of the small scenario's two arms, written under `name`, with
/// `extra` arguments.
fn small_trace(name: &str, extra: &[&str]) -> std::path::PathBuf {
    let trace = tmp(name);
    let mut args = vec!["run", SMALL, "--case", "control-200-files"];
    args.extend_from_slice(extra);
    args.extend(["--trace", trace.to_str().unwrap()]);
    let (ok, _, err) = run(&args);
    assert!(ok, "{err}");
    trace
}

/// A `sim run --trace` file of the small scenario's two arms, written under `name`.
fn two_arm_trace(name: &str) -> std::path::PathBuf {
    small_trace(name, &[])
}

#[test]
fn replay_without_arm_replays_one_arm_and_says_which() {
    let trace = two_arm_trace("two-arms.csv");
    let (ok, both, err) = run(&["replay", trace.to_str().unwrap(), "--model", "s3-standard"]);
    assert!(ok, "{err}");
    assert!(err.contains("replaying arm base"), "{err}");
    let (ok, base, _) = run(&[
        "replay",
        trace.to_str().unwrap(),
        "--model",
        "s3-standard",
        "--arm",
        "base",
    ]);
    assert!(ok);
    assert_eq!(both, base, "the default is the first arm alone");
}

/// A `sim run --trace` file holds every arm, each from time 0: `sim fit` pooled them into a
/// request rate no run had (35,921 GETs over 17 s on many-small-files). It fits one arm, the
/// first unless `--arm` says, and says so; an unknown arm is an error naming the arms.
#[test]
fn fit_takes_one_arm_of_a_simulated_trace() {
    let trace = two_arm_trace("slf-trace.csv");
    let fit = |extra: &[&str]| {
        let mut args = vec!["fit", trace.to_str().unwrap(), "-o"];
        let model = tmp("slf-fit.yaml");
        let model = model.to_str().unwrap().to_string();
        args.push(&model);
        args.extend_from_slice(extra);
        let (ok, out, err) = run(&args);
        (ok, out, err)
    };
    let rate = |out: &str| {
        out.lines()
            .find(|l| l.starts_with("# Request rate:"))
            .map(str::to_string)
            .unwrap_or_default()
    };
    let (ok, first, err) = fit(&[]);
    assert!(ok && err.contains("note: fitting arm base"), "{err}");
    let (ok, base, _) = fit(&["--arm", "base"]);
    assert!(ok);
    assert_eq!(rate(&first), rate(&base));
    let (ok, redesign, _) = fit(&["--arm", "redesign"]);
    assert!(ok);
    assert_ne!(rate(&base), rate(&redesign), "{}", rate(&base));
    let (ok, _, err) = fit(&["--arm", "nope"]);
    assert!(
        !ok && err.contains("no arm `nope`") && err.contains("base, redesign"),
        "{err}"
    );
    // A trace whose rows name no arm (a real reader's request log) refuses `--arm` at once.
    let log = repo().join("traces/captured/peers/small-pyarrow.csv");
    let model = tmp("log-fit.yaml");
    let (ok, _, err) = run(&[
        "fit",
        log.to_str().unwrap(),
        "-o",
        model.to_str().unwrap(),
        "--arm",
        "base",
    ]);
    assert!(!ok && err.contains("the trace has no arms"), "{err}");
}

/// `--ablation` labels its arms by the mechanisms they run with; an override that switched one
/// off printed `base+R5` for a run without R5. Refused, naming the arm and what it would run.
#[test]
fn an_override_that_undoes_an_ablation_arm_is_refused() {
    let (ok, _, err) = run(&[
        "run",
        SMALL,
        "--case",
        "control-200-files",
        "--ablation",
        "--set",
        "r5_issue_queue=false",
    ]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("arm base+R5 would run with none of R1..R8"),
        "{err}"
    );
    let (ok, out, err) = run(&["run", SMALL, "--case", "control-200-files", "--ablation"]);
    assert!(ok && out.contains("base+R5"), "{err}");
}

/// A trace of two replications of the small scenario's two arms (`--reps 2`).
fn two_replication_trace(name: &str) -> std::path::PathBuf {
    small_trace(name, &["--reps", "2"])
}

/// The `total time of N requests` line of a replay's table.
fn replayed_requests(out: &str) -> String {
    out.lines()
        .find(|l| l.starts_with("total time of"))
        .map(|l| l.split(" requests").next().unwrap_or("").to_string())
        .unwrap_or_default()
}

/// Every replication of a `sim run --trace` starts at time 0: replay and fit pooled them
/// (two replications of many-small-files replayed as 19,936 GETs at 47 in flight, each had
/// 9,968 at 24). One replication is kept, the first unless `--replication` says, and said; so
/// is one case and one query.
#[test]
fn replay_and_fit_keep_one_replication_and_say_so() {
    let trace = two_replication_trace("two-reps.csv");
    let t = trace.to_str().unwrap();
    let (ok, first, err) = run(&["replay", t, "--model", "s3-standard"]);
    assert!(ok, "{err}");
    assert!(
        err.contains("note: replaying replication 0") && err.contains("--replication"),
        "{err}"
    );
    let (ok, one, _) = run(&[
        "replay",
        t,
        "--model",
        "s3-standard",
        "--arm",
        "base",
        "--replication",
        "0",
    ]);
    assert!(ok);
    assert_eq!(replayed_requests(&first), replayed_requests(&one));
    let (ok, second, _) = run(&["replay", t, "--model", "s3-standard", "--replication", "1"]);
    assert!(ok);
    assert_eq!(
        replayed_requests(&first),
        replayed_requests(&second),
        "each replication makes the same GETs"
    );
    let (ok, _, err) = run(&["replay", t, "--model", "s3-standard", "--replication", "2"]);
    assert!(
        !ok && err.contains("no replication `2`") && err.contains("replications: 0, 1"),
        "{err}"
    );
    let (ok, _, err) = run(&["replay", t, "--model", "s3-standard", "--case", "nope"]);
    assert!(!ok && err.contains("no case `nope`"), "{err}");
    let model = tmp("two-reps.yaml");
    let (ok, _, err) = run(&["fit", t, "-o", model.to_str().unwrap()]);
    assert!(ok && err.contains("note: fitting replication 0"), "{err}");
}

/// A `--model` file that is not there was reported as an unknown store preset named by its
/// path.
#[test]
fn a_missing_model_file_is_said_missing() {
    let trace = two_arm_trace("missing-model.csv");
    let (ok, _, err) = run(&[
        "replay",
        trace.to_str().unwrap(),
        "--model",
        "/no/such/model.yaml",
    ]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("/no/such/model.yaml: no such file") && !err.contains("preset `/no"),
        "{err}"
    );
}

/// `sim measure` refuses what it would silently not honour: `--io-workers` past 4 (clamped),
/// `--region` without keys (unsigned requests have none), and a `--set` of a store figure
/// the real run does not use (`store.nic` then set the report's lower bound). Each is refused
/// before any request.
#[cfg(feature = "measure")]
#[test]
fn measure_refuses_what_it_would_not_honour() {
    let base = [
        "measure",
        SMALL,
        "--endpoint",
        "http://127.0.0.1:1",
        "--bucket",
        "b",
    ];
    let refused = |extra: &[&str], want: &str| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let (ok, _, err) = run(&args);
        assert!(
            !ok && err.contains(want),
            "{extra:?}: expected `{want}` in:\n{err}"
        );
    };
    refused(&["--io-workers", "9"], "9 is not in 1..=4");
    refused(&["--io-workers", "0"], "0 is not in 1..=4");
    refused(
        &["--region", "eu-west-1"],
        "--region eu-west-1: the region is used to sign",
    );
    refused(
        &["--set", "store.nic=1MiB/s"],
        "--set store.nic=1MiB/s: `store.nic`: a measurement does not use",
    );
    refused(
        &["--set", "store.first_byte.median=500ms"],
        "`store.first_byte.median`: a measurement does not use",
    );
}

/// `check-peers --reps` is bounded as every replication count (only 0 was refused; 4e9 would
/// have run and kept every run's request log).
#[cfg(feature = "testbed")]
#[test]
fn check_peers_reps_are_bounded() {
    for reps in ["0", "1000000"] {
        let (ok, _, err) = run(&["check-peers", "--reps", reps]);
        assert!(
            !ok && err.contains(&format!("--reps {reps}: give between 1 and")),
            "{err}"
        );
    }
}
