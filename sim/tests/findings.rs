//! Findings checks (FINDINGS.md): each runs a shipped scenario and asserts the direction and
//! rough size of a measured effect, with the tolerance beside it and the measured value it stands
//! for, plus a companion assertion that the effect goes away when the mechanism behind it is
//! switched off. Only the findings the scenarios reproduce today are here; see the README's
//! "What is not done yet" for the rest (issue 4).

mod common;
use common::*;
use sim::run::RunOptions;

fn report(name: &str, set: &[&str], case: Option<&str>) -> sim::report::Report {
    let l = load(name, set);
    let opts = RunOptions {
        cases: case.map(|c| vec![c.to_string()]).unwrap_or_default(),
        ..Default::default()
    };
    run(&l, &opts).report
}

#[test]
fn f4_defaults_match_base_and_floor_0_costs_requests_and_time() {
    let r = report("many-small-files.yaml", &[], None);
    let m = |arm: &str, metric_name: &str| metric(&r, "default", arm, metric_name);
    // Measured: base 14.03 s / 9,968 GETs; redesign defaults 13.74 s / 9,968. Tolerance: 5%.
    let wall = m("redesign", "wall_time") / m("base", "wall_time");
    assert!(
        (wall - 1.0).abs() < 0.05,
        "defaults vs base wall time ratio {wall:.3}"
    );
    let gets = m("redesign", "gets") / m("base", "gets");
    assert!(
        (gets - 1.0).abs() < 0.05,
        "defaults vs base GETs ratio {gets:.3}"
    );
    // Measured: floor 0 makes 1.65x the requests (16,440 vs 9,968), 1.35-1.45x the time, fewer
    // bytes (502 vs 576 MiB). Checked: at least 1.3x the requests, at least 1.2x slower, fewer
    // task bytes (the simulator overshoots the sizes today: 3.6x and 2.8x).
    assert!(m("floor-0", "gets") >= 1.3 * m("redesign", "gets"));
    assert!(m("floor-0", "wall_time") >= 1.2 * m("redesign", "wall_time"));
    assert!(m("floor-0", "task_bytes") < m("redesign", "task_bytes"));
    // Companion: with the floor back at its default the extra requests disappear.
    let r2 = report(
        "many-small-files.yaml",
        &["arms.floor-0.settings.input_format_parquet_read_amplification_floor_bytes=256KiB"],
        None,
    );
    let gets_back =
        metric(&r2, "default", "floor-0", "gets") / metric(&r2, "default", "redesign", "gets");
    assert!((gets_back - 1.0).abs() < 0.01, "{gets_back}");
}

#[test]
fn f4_more_io_threads_change_little() {
    // Measured: `input_format_parquet_max_io_threads` makes no difference on this shape (bound by
    // file count, not read depth). Tolerance: 10%.
    let r = report(
        "many-small-files.yaml",
        &[
            "arms.floor-0.settings.input_format_parquet_read_amplification_floor_bytes=256KiB",
            "arms.floor-0.settings.input_format_parquet_max_io_threads=64",
        ],
        None,
    );
    let ratio = metric(&r, "default", "floor-0", "wall_time")
        / metric(&r, "default", "redesign", "wall_time");
    assert!(
        (ratio - 1.0).abs() < 0.10,
        "64 IO threads vs default: {ratio:.3}"
    );
}

#[test]
fn f5_one_large_file_base_is_serial_redesign_is_deep_and_about_ten_times_faster() {
    let r = report("single-large-file.yaml", &[], Some("459-row-groups"));
    let m = |arm: &str, name: &str| metric(&r, "459-row-groups", arm, name);
    // Measured: base mean concurrent GETs 0.98; redesign 19-70 (simulated about 15: checked >= 8).
    assert!(
        m("base", "mean_concurrent_gets") < 1.2,
        "{}",
        m("base", "mean_concurrent_gets")
    );
    assert!(
        m("redesign", "mean_concurrent_gets") >= 8.0,
        "{}",
        m("redesign", "mean_concurrent_gets")
    );
    // Measured: 10-14x less wall time. Checked: 8x to 20x.
    let speedup = m("base", "wall_time") / m("redesign", "wall_time");
    assert!((8.0..=20.0).contains(&speedup), "speed-up {speedup:.1}x");
    // Measured: the 200-file control (one row group each) shows no such gap. Checked: under 2x
    // (simulated 1.6x: the redesign still coalesces each file's columns into fewer reads).
    let c = report("single-large-file.yaml", &[], Some("control-200-files"));
    let control = metric(&c, "control-200-files", "base", "wall_time")
        / metric(&c, "control-200-files", "redesign", "wall_time");
    assert!(control < 2.0, "control speed-up {control:.2}x");
    // Companion: without the issue queue's planning (min_bytes_in_flight = 0, base issue order)
    // the redesign is back to one GET in flight and the speed-up is gone.
    let off = report(
        "single-large-file.yaml",
        &["arms.redesign.settings.input_format_parquet_min_bytes_in_flight=0"],
        Some("459-row-groups"),
    );
    assert!(metric(&off, "459-row-groups", "redesign", "mean_concurrent_gets") < 1.2);
    assert!(
        metric(&off, "459-row-groups", "base", "wall_time")
            / metric(&off, "459-row-groups", "redesign", "wall_time")
            < 2.0
    );
}

#[test]
fn f6_cold_filesystem_cache_base_downloads_tens_of_times_redesign_at_most_1_5x() {
    let on = report("fs-cache-cold.yaml", &[], Some("cache-on-cold"));
    let off = report("fs-cache-cold.yaml", &[], Some("cache-off"));
    let m = |r: &sim::report::Report, case: &str, arm: &str, name: &str| metric(r, case, arm, name);
    // Measured: 450 MB requested -> 35 GB downloaded (78x). Checked: at least 20x.
    let base_amp = m(&on, "cache-on-cold", "base", "store_bytes")
        / m(&on, "cache-on-cold", "base", "task_bytes");
    assert!(base_amp >= 20.0, "base downloads {base_amp:.1}x");
    // Measured: a cold run with the cache on was 2x slower than with it off. Checked: 1.5x to 4x.
    let slower =
        m(&on, "cache-on-cold", "base", "wall_time") / m(&off, "cache-off", "base", "wall_time");
    assert!(
        (1.5..=4.0).contains(&slower),
        "cache on vs off: {slower:.2}x"
    );
    // The redesign's own acceptance criterion: at most 1.5x the bytes its read tasks cover.
    let red_amp = m(&on, "cache-on-cold", "redesign", "store_bytes")
        / m(&on, "cache-on-cold", "redesign", "task_bytes");
    assert!(red_amp <= 1.5, "redesign downloads {red_amp:.2}x");
    // Companion: without R3 the redesign downloads like base.
    let no_r3 = report(
        "fs-cache-cold.yaml",
        &["arms.redesign.settings.r3_filesystem_cache_fixes=false"],
        Some("cache-on-cold"),
    );
    let amp = metric(&no_r3, "cache-on-cold", "redesign", "store_bytes")
        / metric(&no_r3, "cache-on-cold", "redesign", "task_bytes");
    assert!(amp >= 20.0, "without R3: {amp:.1}x");
}
