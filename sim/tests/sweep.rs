//! `sim sweep`: thread-count independence, resume after an interruption, bad `--vary`.

mod common;
use common::*;
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
    // 6 points x 2 arms + header.
    assert_eq!(full.lines().count(), 13);
    // The varied values change the results (so the comparison above is not trivially true).
    let walls: std::collections::BTreeSet<String> = full
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(6).unwrap().to_string())
        .collect();
    assert!(walls.len() > 2, "{walls:?}");

    // Interrupted after 2.5 points: the header, 5 complete rows and a torn line.
    let cut = tmp("cut.csv");
    let mut lines: Vec<&str> = full.lines().take(6).collect();
    let torn = &full.lines().nth(6).unwrap()[..20];
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
