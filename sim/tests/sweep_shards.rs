//! `sim sweep --shard K/N` and `sim sweep merge`: the merged shards are the one-machine CSV byte
//! for byte; a shard resumes like a sweep; a missing, repeated, incomplete or foreign part is
//! an error naming it, and nothing is written.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;
use common::*;
use experiments::sweep::merge::merge;
use experiments::sweep::{parse_vary, run_sweep, Shard, SweepOptions};
use std::path::PathBuf;

fn opts(out: PathBuf, shard: Option<Shard>, resume: bool) -> SweepOptions {
    SweepOptions {
        axes: vec![
            parse_vary("input_format_parquet_coalesce_gap_bytes=256KiB..4MiB:x4").unwrap(),
            parse_vary("store.first_byte.median=10ms,40ms").unwrap(),
        ],
        reps: Some(1),
        output: out,
        resume,
        case: None,
        shard,
        progress: false,
    }
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sim-shards-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn shards(d: &std::path::Path, count: usize) -> Vec<PathBuf> {
    let l = parse(&small(2, 2, "")).unwrap();
    (0..count)
        .map(|index| {
            let p = d.join(format!("part-{index}-of-{count}.csv"));
            run_sweep(&l, &opts(p.clone(), Some(Shard { index, count }), false)).unwrap();
            p
        })
        .collect()
}

fn whole(d: &std::path::Path) -> String {
    let l = parse(&small(2, 2, "")).unwrap();
    let p = d.join("whole.csv");
    run_sweep(&l, &opts(p.clone(), None, false)).unwrap();
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn merged_shards_are_the_one_machine_csv_byte_for_byte() {
    let d = dir("equal");
    let one = whole(&d);
    // 6 points x 2 arms, after the fingerprint and the header.
    assert_eq!(one.lines().count(), 14);
    for count in [1, 2, 3, 7] {
        let mut parts = shards(&d, count);
        let first = std::fs::read_to_string(&parts[0]).unwrap();
        assert!(
            first
                .lines()
                .nth(1)
                .unwrap()
                .starts_with(&format!("# sim sweep shard 0/{count}; points=6; arms=2")),
            "{first}"
        );
        parts.reverse(); // any order
        let out = d.join(format!("merged-{count}.csv"));
        let m = merge(&parts, &out).unwrap();
        assert_eq!((m.shards, m.points, m.rows), (count, 6, 12));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), one, "N = {count}");
    }
}

#[test]
fn a_shard_resumes_and_refuses_another_shards_file() {
    let d = dir("resume");
    let l = parse(&small(2, 2, "")).unwrap();
    let s = Shard { index: 1, count: 2 };
    let p = d.join("part.csv");
    run_sweep(&l, &opts(p.clone(), Some(s), false)).unwrap();
    let full = std::fs::read_to_string(&p).unwrap();
    // The fingerprint, the shard line, the header, then points 1, 3, 5 (2 rows each).
    assert_eq!(full.lines().count(), 9);
    let cut: Vec<&str> = full.lines().take(6).collect();
    std::fs::write(&p, cut.join("\n") + "\n").unwrap();
    let r = run_sweep(&l, &opts(p.clone(), Some(s), true)).unwrap();
    assert_eq!(
        (r.points_resumed, r.points_run, r.points_in_file),
        (1, 2, 3)
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), full);

    let other = run_sweep(
        &l,
        &opts(p.clone(), Some(Shard { index: 0, count: 2 }), true),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        other.contains("holds shard 1/2") && other.contains("this run is shard 0/2"),
        "{other}"
    );
    let whole = run_sweep(&l, &opts(p.clone(), None, true))
        .err()
        .unwrap()
        .to_string();
    assert!(whole.contains("this run is the whole sweep"), "{whole}");
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        full,
        "a refusal keeps the file"
    );
}

fn merge_err(parts: &[PathBuf], out: &std::path::Path) -> String {
    let e = merge(parts, out).err().unwrap().to_string();
    assert!(!out.exists(), "a refused merge wrote {}", out.display());
    e
}

#[test]
fn a_missing_repeated_incomplete_or_foreign_part_is_named() {
    let d = dir("bad");
    let parts = shards(&d, 3);
    let out = d.join("out.csv");

    let e = merge_err(&parts[..2], &out);
    assert!(e.contains("1 of 3 shards missing: 2/3"), "{e}");

    let twice = vec![parts[0].clone(), parts[1].clone(), parts[1].clone()];
    let e = merge_err(&twice, &out);
    assert!(e.contains("shard 1/3 is given twice"), "{e}");

    // Interrupted: its last point lost an arm.
    let cut = d.join("cut.csv");
    let text = std::fs::read_to_string(&parts[2]).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&cut, lines[..lines.len() - 1].join("\n") + "\n").unwrap();
    let e = merge_err(&[parts[0].clone(), parts[1].clone(), cut.clone()], &out);
    assert!(
        e.contains("cut.csv") && e.contains("shard 2/3 is incomplete") && e.contains("--resume"),
        "{e}"
    );

    // A shard of another sweep (other replications).
    let l = parse(&small(2, 2, "")).unwrap();
    let foreign = d.join("foreign.csv");
    let mut o = opts(foreign.clone(), Some(Shard { index: 2, count: 3 }), false);
    o.reps = Some(2);
    run_sweep(&l, &o).unwrap();
    let e = merge_err(&[parts[0].clone(), parts[1].clone(), foreign], &out);
    assert!(
        e.contains("foreign.csv") && e.contains("of another sweep") && e.contains("reps"),
        "{e}"
    );

    // A whole sweep is not a part.
    let w = d.join("whole.csv");
    run_sweep(&l, &opts(w.clone(), None, false)).unwrap();
    let e = merge_err(&[w], &out);
    assert!(e.contains("not a shard's CSV"), "{e}");
}
