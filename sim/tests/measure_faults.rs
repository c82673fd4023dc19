//! The real driver against the test bed's fault mode: 503 bursts, connections reset before
//! and during a body, a stalled body and a server restart, on GETs chosen by their sequence
//! number at the server. The run completes with retries, every attempt traced with its real
//! status, and its figures equal a fault-free run's: the same reads, the same bytes (each
//! once), and as many GETs more as there were retries. A run whose retries run out still hands
//! back the trace of what completed, and says what failed once. The bed runs in real time;
//! nothing here asserts a time. Run with `cargo test -p sim --features testbed`.
#![cfg(feature = "testbed")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

#[path = "common/bed.rs"]
mod setup;

use drive_s3::{Measured, RealStore};
use experiments::report::Metric;
use experiments::run::{self, RunOptions, ScenarioOutput};
use std::collections::BTreeMap;
use testbed::{Fault, FaultPlan, TestBed};

const RTT_NS: u64 = 10_000_000;

/// Retries enough for a read hit by a burst and a restart; a timeout well under the stall.
const SCENARIO: &str = r#"
name: testbed-faults
seed: 1
table:
  layout: small.layout
query:
  columns: [3, 17, 29]
store:
  name: testbed-10ms
  first_byte: { distribution: constant, value: 10ms }
  stream_bandwidth: { distribution: constant, value: 1GiB/s }
  nic: 10GiB/s
  timeout: 400ms
  retry: { max_attempts: 8, backoff_initial: 10ms, backoff_max: 200ms }
  price: { per_1000_gets_usd: 0.0004 }
settings:
  max_threads: 4
  max_parsing_threads: 4
arms:
  - name: base
    strategy: clickhouse-base
  - name: redesign
    strategy: clickhouse-redesign
"#;

/// The faults, by GET number at the bed: the base arm runs first (about 24 GETs and the retries
/// these cause), so the last one lands in the redesign arm.
fn plan() -> FaultPlan {
    FaultPlan::none()
        .at(2, Fault::SlowDown { count: 3 })
        .at(8, Fault::ResetBeforeResponse)
        .at(11, Fault::ResetMidBody)
        .at(
            15,
            Fault::Stall {
                stall_ns: 1_500_000_000,
            },
        )
        .at(
            20,
            Fault::Restart {
                down_ns: 60_000_000,
            },
        )
        .at(45, Fault::ResetMidBody)
}

struct Bed {
    _dir: tempfile::TempDir,
    bed: TestBed,
    real: RealStore,
    loaded: scenario::LoadedScenario,
    /// Object key -> the trace's object id.
    objects: BTreeMap<String, u64>,
}

fn start(scenario_text: &str) -> Bed {
    let dir = tempfile::tempdir().unwrap();
    let bed = setup::small_files_bed(dir.path(), RTT_NS);
    let path = dir.path().join("s.yaml");
    std::fs::write(&path, scenario_text).unwrap();
    let loaded = scenario::load(&path, &[]).unwrap();
    let real = setup::real_store(&bed);
    let r = scenario::resolve(&loaded, &Default::default()).unwrap();
    let objects = drive_s3::keys::table_keys(&r.table, "small")
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, k)| (k.to_string(), i as u64))
        .collect();
    Bed {
        _dir: dir,
        bed,
        real,
        loaded,
        objects,
    }
}

fn options() -> RunOptions {
    RunOptions {
        trace: true,
        replications: Some(1),
        ..Default::default()
    }
}

fn measure(b: &Bed, rt: &tokio::runtime::Runtime) -> ScenarioOutput {
    let runner = Measured::new(b.real.clone(), rt, 0, false);
    run::run_scenario_with(&b.loaded, &options(), &runner).unwrap()
}

/// A store row of a trace: arm, object, offset, length, status, attempt.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Row {
    arm: String,
    object: u64,
    offset: u64,
    length: u64,
    status: u16,
    attempt: u32,
}

fn store_rows(trace_csv: &str) -> Vec<Row> {
    let mut rd = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .flexible(true)
        .from_reader(trace_csv.as_bytes());
    let h = rd.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|x| x == n).unwrap();
    let c = [
        col("served_by"),
        col("arm"),
        col("object"),
        col("offset_bytes"),
        col("length_bytes"),
        col("status"),
        col("attempt"),
    ];
    rd.records()
        .map(|r| r.unwrap())
        .filter(|r| &r[c[0]] == "store")
        .map(|r| Row {
            arm: r[c[1]].to_string(),
            object: r[c[2]].parse().unwrap(),
            offset: r[c[3]].parse().unwrap(),
            length: r[c[4]].parse().unwrap(),
            status: r[c[5]].parse().unwrap(),
            attempt: r[c[6]].parse().unwrap(),
        })
        .collect()
}

/// How many times each byte was received, per (arm, object), as a normalised step function:
/// the sorted (position, running count) at each change.
fn coverage(rows: &[Row]) -> BTreeMap<(String, u64), Vec<(u64, i64)>> {
    let mut edges: BTreeMap<(String, u64), BTreeMap<u64, i64>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.status == 206 && r.length > 0) {
        let e = edges.entry((r.arm.clone(), r.object)).or_default();
        *e.entry(r.offset).or_default() += 1;
        *e.entry(r.offset + r.length).or_default() -= 1;
    }
    edges
        .into_iter()
        .map(|(k, e)| {
            let mut level = 0;
            let mut steps: Vec<(u64, i64)> = Vec::new();
            for (at, d) in e {
                if d == 0 {
                    continue;
                }
                level += d;
                steps.push((at, level));
            }
            (k, steps)
        })
        .collect()
}

#[test]
fn a_run_through_the_faults_completes_with_retries_and_the_fault_free_figures() {
    let b = start(SCENARIO);
    let rt = drive_s3::runtime(2).unwrap();
    let clean = measure(&b, &rt);
    let _ = b.bed.take_requests();
    b.bed.set_faults(plan());
    let faulty = measure(&b, &rt);
    let counts = b.bed.fault_counts();
    let served = b.bed.take_requests();
    eprintln!("{counts:?}");

    // Every planned fault fired (the run has more GETs than the last fault's number).
    assert_eq!(counts.slow_downs, 3);
    assert_eq!(counts.resets_before_response, 1);
    assert_eq!(counts.resets_mid_body, 2);
    assert_eq!(counts.stalls, 1);
    assert_eq!(counts.restarts, 1);
    assert!(counts.connections_closed_by_restart >= 1);

    // The figures: per arm, the same reads, rows and bytes; GETs are the fault-free GETs plus
    // one per retry, and there are at least as many retries as GETs the plan failed.
    let mut retries_total = 0.0;
    for (f, c) in faulty.report.cases[0]
        .arms
        .iter()
        .zip(&clean.report.cases[0].arms)
    {
        let (fm, cm) = (&f.runs[0], &c.runs[0]);
        for metric in [
            Metric::StoreBytes,
            Metric::ReadTasks,
            Metric::TaskBytes,
            Metric::Rows,
        ] {
            assert_eq!(
                fm.value(metric),
                cm.value(metric),
                "arm {}: {}",
                f.arm,
                metric.name()
            );
        }
        assert_eq!(cm.value(Metric::StoreRetries), 0.0, "arm {}", c.arm);
        let retries = fm.value(Metric::StoreRetries);
        assert_eq!(
            fm.value(Metric::Gets),
            cm.value(Metric::Gets) + retries,
            "arm {}: GETs count every attempt",
            f.arm
        );
        eprintln!(
            "arm {}: {} GETs fault-free, {} with faults ({} retries), {} bytes both",
            f.arm,
            cm.value(Metric::Gets),
            fm.value(Metric::Gets),
            retries,
            fm.value(Metric::StoreBytes)
        );
        retries_total += retries;
    }
    assert!(
        retries_total >= counts.failed_gets() as f64,
        "{retries_total} retries for {} failed GETs",
        counts.failed_gets()
    );

    // The trace: one row per attempt. First attempts are the fault-free run's GETs, one each;
    // the bytes the 206 rows carry are the fault-free run's, byte for byte, none twice.
    let (frows, crows) = (store_rows(&faulty.trace_csv), store_rows(&clean.trace_csv));
    assert_eq!(frows.len(), faulty.trace_rows);
    let firsts = |rows: &[Row]| {
        let mut v: Vec<(String, u64, u64)> = rows
            .iter()
            .filter(|r| r.attempt == 1)
            .map(|r| (r.arm.clone(), r.object, r.offset))
            .collect();
        v.sort();
        v
    };
    assert_eq!(firsts(&frows), firsts(&crows));
    assert_eq!(coverage(&frows), coverage(&crows));
    let retried = frows.iter().filter(|r| r.attempt > 1).count() as f64;
    assert_eq!(retried, retries_total);

    // Real statuses: the 503s are 503s (and each was retried); no-response attempts are 0.
    let slow = frows.iter().filter(|r| r.status == 503).count() as u64;
    assert_eq!(slow, counts.slow_downs);
    assert!(frows.iter().all(|r| [206, 503, 0].contains(&r.status)));
    assert!(frows.iter().any(|r| r.status == 0));

    // Every request the bed served whole is in the trace, and the trace has no more 206 rows
    // than the bed sent 206 heads.
    let mut traced_206: Vec<(u64, u64, u64)> = frows
        .iter()
        .filter(|r| r.status == 206)
        .map(|r| (r.object, r.offset, r.length))
        .collect();
    traced_206.sort_unstable();
    let gets: Vec<_> = served
        .iter()
        .filter(|s| s.method == "GET" && !s.key.is_empty())
        .collect();
    let heads_206 = gets.iter().filter(|s| s.status == 206).count();
    assert!(
        traced_206.len() <= heads_206,
        "{} > {heads_206}",
        traced_206.len()
    );
    for s in gets.iter().filter(|s| s.status == 206) {
        let (a, e) = s.range.unwrap();
        if s.bytes_sent != e - a {
            continue; // cut by the fault mode
        }
        let want = (b.objects[&s.key], a, e - a);
        assert!(
            traced_206.binary_search(&want).is_ok(),
            "the bed served {want:?} whole, the trace does not have it"
        );
    }

    // `sim fit` on the trace sees the throttling.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("faulty.csv");
    std::fs::write(&path, &faulty.trace_csv).unwrap();
    let parsed = tracefit::parse_file(&path, &Default::default()).unwrap();
    let fit = tracefit::fit_store(&parsed, &Default::default()).unwrap();
    assert!(fit.errors.throttled_rate > 0.0, "{:?}", fit.errors);
}

#[test]
fn a_run_whose_retries_run_out_keeps_the_trace_of_what_completed_and_says_why_once() {
    let b = start(&SCENARIO.replace("max_attempts: 8", "max_attempts: 2"));
    let rt = drive_s3::runtime(2).unwrap();
    // GET 5 is cut in the middle of its body, and so is its resumed rest.
    b.bed.set_faults(
        FaultPlan::none()
            .at(5, Fault::SlowDown { count: 1 })
            .at(6, Fault::ResetMidBody)
            .at(7, Fault::ResetMidBody),
    );
    let opts = RunOptions {
        arms: vec!["base".into()],
        ..options()
    };
    let runner = Measured::new(b.real.clone(), &rt, 0, false);
    // Which reads GETs 6 and 7 belong to depends on arrival order: if they are two reads'
    // first attempts, both reads resume and the run completes; the test then asks again with
    // a burst that no read can outlast.
    let stopped = match run::run_scenario_keeping_trace(&b.loaded, &opts, &runner) {
        Err(s) => s,
        Ok(_) => {
            b.bed
                .set_faults(FaultPlan::none().at(3, Fault::SlowDown { count: 1_000 }));
            run::run_scenario_keeping_trace(&b.loaded, &opts, &runner)
                .err()
                .expect("a run of nothing but 503s past the first GETs must fail")
        }
    };
    // What completed is traced: the GETs before the fault at least, with their real statuses.
    let rows = store_rows(&stopped.trace_csv);
    assert_eq!(rows.len(), stopped.trace_rows);
    assert!(
        rows.iter().filter(|r| r.status == 206).count() >= 3,
        "{rows:?}"
    );
    assert!(rows.iter().any(|r| r.status != 206), "{rows:?}");
    // Said once: the message with its causes names the failed read once.
    let said = format!("{:#}", anyhow::Error::from(stopped.error));
    assert_eq!(said.matches("the read failed").count(), 1, "{said}");
    assert_eq!(said.matches("GET small/").count(), 1, "{said}");
    assert!(said.contains("attempt 2 of at most 2"), "{said}");
}
