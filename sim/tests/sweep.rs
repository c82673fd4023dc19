//! `sim sweep`: thread-count independence, resume after an interruption, bad `--vary`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;
use common::*;
use experiments::report::Metric;
use experiments::sweep::{parse_vary, run_sweep, SweepOptions};
use std::path::PathBuf;

fn opts(out: PathBuf, resume: bool) -> SweepOptions {
    SweepOptions {
        axes: vec![
            parse_vary("input_format_parquet_coalesce_gap_bytes=256KiB..4MiB:x4").unwrap(),
            parse_vary("store.first_byte.median=10ms,40ms").unwrap(),
        ],
        reps: Some(2),
        output: out,
        resume,
        case: None,
        shard: None,
        progress: false,
    }
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-sweep-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn csv_does_not_depend_on_threads_and_resume_gives_the_same_file() {
    let l = parse(&small(3, 2, "")).unwrap();
    let one = tmp("one.csv");
    let two = tmp("two.csv");
    let res = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| run_sweep(&l, &opts(one.clone(), false)))
        .unwrap();
    assert_eq!(res.points_run, 6);
    rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap()
        .install(|| run_sweep(&l, &opts(two.clone(), false)))
        .unwrap();
    let full = std::fs::read_to_string(&one).unwrap();
    assert_eq!(full, std::fs::read_to_string(&two).unwrap());
    // The fingerprint, the header, 6 points x 2 arms.
    assert_eq!(full.lines().count(), 14);
    assert!(full.starts_with("# sim sweep "), "{full}");
    // The varied values change the results (so the comparison above is not trivially true).
    let walls: std::collections::BTreeSet<String> = full
        .lines()
        .skip(2)
        .map(|l| l.split(',').nth(6).unwrap().to_string())
        .collect();
    assert!(walls.len() > 2, "{walls:?}");

    // Interrupted after 2.5 points: the fingerprint, the header, 5 complete rows and a torn line.
    let cut = tmp("cut.csv");
    let mut lines: Vec<&str> = full.lines().take(7).collect();
    let torn = &full.lines().nth(7).unwrap()[..20];
    lines.push(torn);
    std::fs::write(&cut, lines.join("\n")).unwrap();
    let res = run_sweep(&l, &opts(cut.clone(), true)).unwrap();
    assert_eq!(res.points_resumed, 2);
    assert_eq!(res.points_run, 4);
    assert_eq!(std::fs::read_to_string(&cut).unwrap(), full);
}

#[test]
fn bad_vary_is_a_clear_error() {
    assert!(parse_vary("input_format_parquet_coalesce_gap_bytes=").is_err());
    let e = parse_vary("input_format_parquet_coalesce_gap_bytes=64..16MiB:x2")
        .unwrap_err()
        .to_string();
    assert!(e.contains("unit"), "{e}");
    let l = parse(&small(2, 2, "")).unwrap();
    let mut o = opts(tmp("bad.csv"), false);
    o.axes = vec![parse_vary("input_format_parquet_coalesce_gap_byte=1MiB,2MiB").unwrap()];
    let e = run_sweep(&l, &o)
        .err()
        .expect("an unknown name must fail")
        .to_string();
    assert!(e.contains("input_format_parquet_coalesce_gap_bytes"), "{e}");
}

/// A file torn inside the last field of a point's last row has every field of that row: only
/// the missing newline tells. That point runs again; nothing before it is lost.
#[test]
fn a_row_torn_inside_its_last_field_is_not_kept() {
    let l = parse(&small(3, 2, "")).unwrap();
    let full_path = tmp("full-torn.csv");
    run_sweep(&l, &opts(full_path.clone(), false)).unwrap();
    let full = std::fs::read_to_string(&full_path).unwrap();
    // Fingerprint, header, points 0 and 1 (4 rows), and point 2's two rows with the second
    // losing its last two characters and its newline.
    let upto: usize = full.lines().take(8).map(|l| l.len() + 1).sum();
    let cut = tmp("torn-field.csv");
    std::fs::write(&cut, &full[..upto - 3]).unwrap();
    let res = run_sweep(&l, &opts(cut.clone(), true)).unwrap();
    assert_eq!(res.points_resumed, 2, "point 2 was torn");
    assert_eq!(std::fs::read_to_string(&cut).unwrap(), full);
}

/// `--resume` keeps rows only from the same sweep: other replications, another `--set`,
/// other axis values or a file that is not a sweep are refused, naming what differs, and the
/// file is left as it was.
#[test]
fn resume_refuses_another_sweeps_file_naming_what_differs() {
    let l = parse(&small(2, 2, "")).unwrap();
    let path = tmp("stale.csv");
    let mut o = opts(path.clone(), false);
    o.reps = Some(1);
    run_sweep(&l, &o).unwrap();
    let before = std::fs::read_to_string(&path).unwrap();

    let mut more_reps = opts(path.clone(), true);
    more_reps.reps = Some(3);
    let e = run_sweep(&l, &more_reps).err().unwrap().to_string();
    assert!(
        e.contains("reps") && e.contains("`1` in the file, `3` now"),
        "{e}"
    );

    let with_set = l
        .with_overrides(&[scenario::parse_override("max_threads=2").unwrap()])
        .unwrap();
    let mut same = opts(path.clone(), true);
    same.reps = Some(1);
    let e = run_sweep(&with_set, &same).err().unwrap().to_string();
    assert!(e.contains("overrides"), "{e}");

    let mut other_values = same.clone();
    other_values.axes[1] = parse_vary("store.first_byte.median=10ms,80ms").unwrap();
    let e = run_sweep(&l, &other_values).err().unwrap().to_string();
    assert!(e.contains("axes"), "{e}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        before,
        "refusals change nothing"
    );

    let foreign = tmp("foreign.csv");
    std::fs::write(&foreign, "a,b,c\n1,2,3\n").unwrap();
    let mut f = same.clone();
    f.output = foreign.clone();
    let e = run_sweep(&l, &f).err().unwrap().to_string();
    assert!(e.contains("not a `# sim sweep` fingerprint"), "{e}");
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), "a,b,c\n1,2,3\n");

    // The same sweep resumes: nothing to run.
    let res = run_sweep(&l, &same).unwrap();
    assert_eq!((res.points_resumed, res.points_run), (6, 0));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}

#[test]
fn an_axis_given_twice_is_refused() {
    let l = parse(&small(2, 2, "")).unwrap();
    let args = [
        "input_format_parquet_min_bytes_in_flight=0,64MiB".to_string(),
        "input_format_parquet_min_bytes_in_flight=16MiB".to_string(),
    ];
    let e = experiments::sweep::axes_for(&l, &args)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("varied twice"), "{e}");
}

/// A bare axis reaches every arm that honours it, overriding the arm's own value; the CSV
/// says what each arm ran with, and `-` for an arm that does not honour the setting.
#[test]
fn axis_columns_hold_what_each_arm_ran_with() {
    let extra = "  - name: floor-0\n    strategy: clickhouse-redesign\n    settings: { input_format_parquet_min_bytes_in_flight: 0 }\n  - name: duck\n    strategy: duckdb\n";
    let l = parse(&small(2, 2, extra)).unwrap();
    let path = tmp("effective.csv");
    let mut o = opts(path.clone(), false);
    o.axes = vec![parse_vary("input_format_parquet_min_bytes_in_flight=16MiB,128MiB").unwrap()];
    o.reps = Some(1);
    let res = run_sweep(&l, &o).unwrap();
    let value = |arm: &str, point: usize| {
        res.rows
            .iter()
            .find(|r| r.arm == arm && r.point == point)
            .map(|r| r.values[0].clone())
            .unwrap()
    };
    assert_eq!(value("redesign", 1), "128MiB");
    assert_eq!(
        value("floor-0", 0),
        "16MiB",
        "the axis overrides the arm's own 0"
    );
    assert_eq!(
        value("base", 0),
        "-",
        "base has R5 off: the floor did nothing there"
    );
    assert_eq!(value("duck", 0), "-", "duckdb does not honour it");
    assert!(
        res.notes.iter().any(|n| n.contains("duck")),
        "says which arm it did not reach: {:?}",
        res.notes
    );
    let csv = std::fs::read_to_string(&path).unwrap();
    assert!(csv.contains(",-,duck,duckdb,"), "{csv}");
}

/// A sweep reuses a run where a point's arm would run the same thing again (base under the
/// redesign's knobs; two arms an axis makes equal): every row is still what `sim run` gives
/// at that point, for every arm.
#[test]
fn reused_runs_are_what_a_run_at_the_point_gives() {
    let extra = "  - name: floor-0\n    strategy: clickhouse-redesign\n    settings: { input_format_parquet_read_amplification_floor_bytes: 0 }\n";
    let text = small(3, 3, extra);
    let l = parse(&text).unwrap();
    let mut o = opts(tmp("reuse.csv"), false);
    o.axes =
        vec![parse_vary("input_format_parquet_read_amplification_floor_bytes=0,1MiB").unwrap()];
    o.reps = Some(2);
    let res = run_sweep(&l, &o).unwrap();
    let mut walls = std::collections::BTreeSet::new();
    for (point, floor) in ["0", "1MiB"].iter().enumerate() {
        let set = format!("input_format_parquet_read_amplification_floor_bytes={floor}");
        let l = parse_with(&text, &[&set]);
        let r = run(
            &l,
            &experiments::run::RunOptions {
                replications: Some(2),
                ..Default::default()
            },
        )
        .report;
        for arm in ["base", "redesign", "floor-0"] {
            let row = res
                .rows
                .iter()
                .find(|x| x.arm == arm && x.point == point)
                .unwrap();
            for metric in [Metric::WallTime, Metric::Gets, Metric::StoreBytes] {
                let swept = row.summaries.iter().find(|(m, _)| *m == metric).unwrap().1;
                let ran = metric_of(&r, arm, metric);
                assert_eq!(
                    swept.mean, ran,
                    "point {point} ({floor}), {arm}, {metric:?}"
                );
                if metric == Metric::WallTime {
                    walls.insert(ran.to_bits());
                }
            }
        }
    }
    // The floor changes the redesign's run, so some rows differ (the check is not trivially
    // true), and base, which has no floor, is the same at both points.
    assert!(walls.len() >= 2, "{walls:?}");
}

fn metric_of(r: &experiments::report::Report, arm: &str, m: Metric) -> f64 {
    metric(r, "default", arm, m)
}

/// A scenario's `sweep: vary:` axes keep the order the file writes them (the first is the
/// plots' x axis): the file is read back through a tree that sorts its maps, which put
/// `arms.redesign.settings.x` before `input_format_...` whatever the file said.
#[test]
fn a_scenarios_axes_keep_the_files_order() {
    let text = format!(
        "{}sweep:\n  vary:\n    input_format_parquet_coalesce_gap_bytes: 64KiB,1MiB\n    arms.redesign.settings.input_format_parquet_min_bytes_in_flight: 1MiB,2MiB\n",
        small(2, 2, "")
    );
    let loaded = parse(&text).unwrap();
    let (axes, _) = experiments::sweep::axes_for(&loaded, &[]).unwrap();
    let names: Vec<&str> = axes.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "input_format_parquet_coalesce_gap_bytes",
            "arms.redesign.settings.input_format_parquet_min_bytes_in_flight"
        ]
    );
    // And through an override of another key (a case, a sweep point) as well.
    let again = loaded
        .with_overrides(&[scenario::parse_override("seed=9").unwrap()])
        .unwrap();
    let (axes, _) = experiments::sweep::axes_for(&again, &[]).unwrap();
    assert_eq!(axes[0].name, "input_format_parquet_coalesce_gap_bytes");
}

/// `--resume` read the file's first line whole before knowing it was a sweep's (401 MB for a
/// 200 MB line); it stops at `MAX_SWEEP_LINE_BYTES`, as `sim sweep merge` does.
#[test]
fn resume_reads_a_bounded_first_line() {
    let l = parse(&small(2, 2, "")).unwrap();
    let out = tmp("long-first-line.csv");
    let line = format!(
        "# sim sweep {}\n",
        "a".repeat(limits::MAX_SWEEP_LINE_BYTES + 10)
    );
    std::fs::write(&out, line).unwrap();
    let Err(e) = run_sweep(&l, &opts(out.clone(), true)) else {
        panic!("a 16 MiB first line was taken for a sweep's");
    };
    let e = e.to_string();
    assert!(e.contains("MAX_SWEEP_LINE_BYTES"), "{e}");
    std::fs::remove_file(out).unwrap();
}

/// The data rows were read through the csv crate with no bound on a line (it buffers a record
/// of any length); a row past `MAX_SWEEP_LINE_BYTES` is refused by `--resume`, not cut off with
/// every row after it.
#[test]
fn resume_refuses_a_data_row_past_the_line_bound() {
    let l = parse(&small(2, 2, "")).unwrap();
    let out = tmp("long-data-row.csv");
    run_sweep(&l, &opts(out.clone(), false)).unwrap();
    let full = std::fs::read_to_string(&out).unwrap();
    // The fingerprint, the header, then a row of point 0 with a field past the bound.
    let mut lines: Vec<String> = full.lines().take(2).map(str::to_string).collect();
    lines.push(format!(
        "0,{}",
        "9".repeat(limits::MAX_SWEEP_LINE_BYTES + 10)
    ));
    std::fs::write(&out, lines.join("\n") + "\n").unwrap();
    let Err(e) = run_sweep(&l, &opts(out.clone(), true)) else {
        panic!("a row past the bound was read");
    };
    let e = e.to_string();
    assert!(e.contains("MAX_SWEEP_LINE_BYTES"), "{e}");
    std::fs::remove_file(out).unwrap();
}
