//! Plots of sweeps and timelines (PNG and SVG, via the `charts` crate).
//!
//! A sweep plot shows only what ran: each row carries the value its arm ran with on each axis
//! (`-` where the arm does not apply the axis's setting), and an arm is drawn against an axis
//! only where it applied it.

use crate::report::{Metric, Unit};
use crate::sweep::{Axis, Kind, SweepResult, SweepRow};
use charts::{ChartError, Heatmap, LineChart, Panels, Series, SeriesKind};
use drive::TimelineRow;
use std::path::{Path, PathBuf};

/// Metrics plotted against a varied setting.
pub const SWEEP_METRICS: &[Metric] = &[Metric::WallTime, Metric::Gets, Metric::StoreBytes];

/// What a sweep row's axis column holds when the arm did not apply the axis's setting.
const NOT_APPLIED: &str = "-";

fn unit_of(unit: Unit) -> (&'static str, fn(f64) -> String) {
    match unit {
        Unit::Nanoseconds => ("s", |v| format!("{:.3}", v / 1e9)),
        Unit::Bytes => ("MiB", |v| format!("{:.1}", v / (1024.0 * 1024.0))),
        Unit::Dollars => ("USD", |v| format!("{v:.4}")),
        Unit::BytesPerSecond => ("MiB/s", |v| format!("{:.1}", v / (1024.0 * 1024.0))),
        Unit::EventMicroseconds => ("us", |v| format!("{v:.0}")),
        Unit::EventBytes => ("bytes", |v| format!("{v:.0}")),
        Unit::Count | Unit::Ratio | Unit::Cores => ("", |v| format!("{v:.0}")),
    }
}

fn scale(unit: Unit, v: f64) -> f64 {
    match unit {
        Unit::Nanoseconds => v / 1e9,
        Unit::Bytes | Unit::BytesPerSecond => v / (1024.0 * 1024.0),
        _ => v,
    }
}

fn axis_label(a: &Axis) -> String {
    match a.kind {
        Kind::Bytes => format!("{} (bytes)", a.name),
        Kind::Duration => format!("{} (ms)", a.name),
        Kind::Bandwidth => format!("{} (MiB/s)", a.name),
        Kind::Number | Kind::Text => a.name.clone(),
    }
}

fn axis_value(a: &Axis, i: usize) -> f64 {
    let v = a.numeric.get(i).copied().unwrap_or(i as f64);
    match a.kind {
        Kind::Duration => v / 1e6,
        Kind::Bandwidth => v / (1024.0 * 1024.0),
        _ => v,
    }
}

fn axis_format(a: &Axis) -> Option<fn(f64) -> String> {
    match a.kind {
        Kind::Bytes => Some(|v| units::format_bytes(v.max(0.0).round() as u64)),
        _ => None,
    }
}

/// Sizes and text are drawn as categories, evenly spaced at the values as swept.
fn categorical(a: &Axis) -> bool {
    a.kind == Kind::Bytes || a.kind == Kind::Text
}

/// Where value `i` of the x axis sits.
fn x_of(a: &Axis, i: usize) -> f64 {
    if categorical(a) {
        i as f64
    } else {
        axis_value(a, i)
    }
}

/// Whether `row`'s arm applied axis `axis`'s setting at its point.
fn applied(row: &SweepRow, axis: usize) -> bool {
    row.values.get(axis).is_some_and(|v| v != NOT_APPLIED)
}

/// The sweep's arms, in the order of its rows.
fn arms(result: &SweepResult) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in &result.rows {
        if !v.contains(&r.arm) {
            v.push(r.arm.clone());
        }
    }
    v
}

/// `arm`'s rows where every axis but the first sits at its first value, by the first axis.
fn first_point_rows<'a>(result: &'a SweepResult, arm: &str) -> Vec<&'a SweepRow> {
    let mut rows: Vec<&SweepRow> = result
        .rows
        .iter()
        .filter(|r| r.arm == arm && r.coords.iter().skip(1).all(|&i| i == 0))
        .collect();
    rows.sort_by_key(|r| r.coords.first().copied());
    rows
}

fn mean_of(row: &SweepRow, metric: Metric) -> Option<&crate::report::Summary> {
    row.summaries
        .iter()
        .find(|(n, _)| *n == metric)
        .map(|(_, s)| s)
}

/// One arm's line against the first axis: its points where it applied the axis's setting; an
/// arm that applied it nowhere is a flat reference line across the axis, unmarked and named
/// for what it is.
fn arm_series(result: &SweepResult, arm: &str, metric: Metric) -> Series {
    let x_axis = &result.axes[0];
    let unit = metric.unit();
    let rows = first_point_rows(result, arm);
    let ran: Vec<&SweepRow> = rows.iter().copied().filter(|r| applied(r, 0)).collect();
    if ran.is_empty() {
        return reference_series(
            x_axis,
            arm,
            rows.first().and_then(|r| mean_of(r, metric)),
            unit,
        );
    }
    let mut points = Vec::new();
    let mut band = Vec::new();
    for row in &ran {
        let (Some(&xi), Some(s)) = (row.coords.first(), mean_of(row, metric)) else {
            continue;
        };
        let x = x_of(x_axis, xi);
        points.push((x, scale(unit, s.mean)));
        if s.n > 1 {
            band.push((
                x,
                scale(unit, s.mean - s.ci95),
                scale(unit, s.mean + s.ci95),
            ));
        }
    }
    let name = if ran.len() < rows.len() {
        format!(
            "{arm} (not applied at {} of {})",
            rows.len() - ran.len(),
            rows.len()
        )
    } else {
        arm.to_string()
    };
    Series {
        name,
        points,
        band,
        kind: SeriesKind::Line,
    }
}

fn reference_series(
    x_axis: &Axis,
    arm: &str,
    s: Option<&crate::report::Summary>,
    unit: Unit,
) -> Series {
    let ends = [0, x_axis.values.len().saturating_sub(1)].map(|i| x_of(x_axis, i));
    let (points, band) = match s {
        Some(s) => (
            ends.iter().map(|&x| (x, scale(unit, s.mean))).collect(),
            if s.n > 1 {
                ends.iter()
                    .map(|&x| {
                        (
                            x,
                            scale(unit, s.mean - s.ci95),
                            scale(unit, s.mean + s.ci95),
                        )
                    })
                    .collect()
            } else {
                Vec::new()
            },
        ),
        None => (Vec::new(), Vec::new()),
    };
    Series {
        name: format!("{arm} (setting not applied)"),
        points,
        band,
        kind: SeriesKind::Reference,
    }
}

/// Where the other axes sit on a line chart (each at its first value), true per arm: the value
/// each arm ran with, or that it did not apply the setting. `None` with one axis.
fn at_clause(result: &SweepResult) -> Option<String> {
    let arms = arms(result);
    let clauses: Vec<String> = result
        .axes
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, axis)| {
            // (value, arms that ran with it) in arm order.
            let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
            for arm in &arms {
                let value = first_point_rows(result, arm)
                    .first()
                    .and_then(|r| r.values.get(i).cloned())
                    .unwrap_or_else(|| NOT_APPLIED.to_string());
                match groups.iter_mut().find(|g| g.0 == value) {
                    Some(g) => g.1.push(arm),
                    None => groups.push((value, vec![arm])),
                }
            }
            axis_clause(&axis.name, &groups)
        })
        .collect();
    (!clauses.is_empty()).then(|| format!("at {}", clauses.join("; ")))
}

/// One axis's part of the clause: the values arms ran with, then the arms that did not apply it.
fn axis_clause(name: &str, groups: &[(String, Vec<&str>)]) -> String {
    match groups {
        [(value, _)] if value != NOT_APPLIED => format!("{name}={value}"),
        _ => groups
            .iter()
            .filter(|g| g.0 != NOT_APPLIED)
            .chain(groups.iter().filter(|g| g.0 == NOT_APPLIED))
            .map(|(value, arms)| {
                let arms = arms.join(", ");
                if value == NOT_APPLIED {
                    format!("{name} not applied for {arms}")
                } else {
                    format!("{name}={value} for {arms}")
                }
            })
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// The line chart of `metric` against the first axis, every other axis at its first value.
fn metric_chart(result: &SweepResult, scenario: &str, metric: Metric) -> LineChart {
    let x_axis = &result.axes[0];
    let name = metric.name();
    let (unit_name, _) = unit_of(metric.unit());
    let cat = categorical(x_axis);
    LineChart {
        title: format!("{scenario} / {}: {name} vs {}", result.case, x_axis.name),
        subtitle: at_clause(result),
        x_label: axis_label(x_axis),
        y_label: if unit_name.is_empty() {
            name.to_string()
        } else {
            format!("{name} ({unit_name})")
        },
        series: arms(result)
            .iter()
            .map(|arm| arm_series(result, arm, metric))
            .collect(),
        log_x: !cat && charts::spans_decades(x_axis.numeric.iter().copied()),
        log_y: false,
        x_format: axis_format(x_axis),
        y_format: None,
        x_ticks: cat.then(|| x_axis.values.clone()),
    }
}

/// `arm`'s wall time over the two axes, or why there is none: an arm that applied the setting
/// of either axis nowhere has no surface to show (every cell would be the same run).
fn wall_time_heatmap(result: &SweepResult, scenario: &str, arm: &str) -> Result<Heatmap, String> {
    let (x_axis, y_axis) = (&result.axes[0], &result.axes[1]);
    let rows: Vec<&SweepRow> = result.rows.iter().filter(|r| r.arm == arm).collect();
    let unapplied: Vec<&str> = [x_axis, y_axis]
        .iter()
        .enumerate()
        .filter(|(i, _)| !rows.iter().any(|r| applied(r, *i)))
        .map(|(_, a)| a.name.as_str())
        .collect();
    if !unapplied.is_empty() {
        return Err(format!(
            "no heatmap for arm {arm}: it does not apply {}",
            unapplied.join(" or ")
        ));
    }
    let mut z = vec![vec![f64::NAN; x_axis.values.len()]; y_axis.values.len()];
    let mut blank = 0;
    for row in &rows {
        let (Some(&xi), Some(&yi)) = (row.coords.first(), row.coords.get(1)) else {
            continue;
        };
        let Some(cell) = z.get_mut(yi).and_then(|r| r.get_mut(xi)) else {
            continue;
        };
        if !(applied(row, 0) && applied(row, 1)) {
            blank += 1;
            continue;
        }
        if let Some(s) = mean_of(row, Metric::WallTime) {
            *cell = s.mean / 1e9;
        }
    }
    Ok(Heatmap {
        title: format!("{scenario} / {} / {arm}: wall time", result.case),
        subtitle: (blank > 0)
            .then(|| format!("{blank} blank cells: the arm did not apply a setting there")),
        x_label: axis_label(x_axis),
        y_label: axis_label(y_axis),
        x_ticks: x_axis.values.clone(),
        y_ticks: y_axis.values.clone(),
        z,
        z_label: "wall time (s)".into(),
        lower_is_better: true,
        z_format: |v| format!("{v:.2}s"),
    })
}

/// What [`sweep_plots`] wrote, and the plots it left out with why.
#[derive(Debug, Default)]
pub struct SweepPlots {
    pub paths: Vec<PathBuf>,
    pub skipped: Vec<String>,
}

/// Writes the sweep's plots into `dir`: one line chart per metric for the first axis (the
/// other axes at their first value, stated under the title per arm), and a heatmap per arm
/// when two axes vary, for each arm that applies both axes' settings. Titles name the scenario
/// and the case. On an axis of sizes the points sit at the swept values exactly as typed
/// (`64KiB`, `1MiB`, ...), evenly spaced.
pub fn sweep_plots(
    result: &SweepResult,
    scenario: &str,
    dir: &Path,
) -> Result<SweepPlots, ChartError> {
    let mut out = SweepPlots::default();
    let Some(x_axis) = result.axes.first() else {
        return Ok(out);
    };
    for metric in SWEEP_METRICS {
        let chart = metric_chart(result, scenario, *metric);
        let stem = dir.join(format!("{scenario}-{}-vs-{}", metric.name(), x_axis.name));
        out.paths.extend(chart.save(&stem)?);
    }
    if result.axes.len() == 2 {
        for arm in arms(result) {
            match wall_time_heatmap(result, scenario, &arm) {
                Ok(h) => out
                    .paths
                    .extend(h.save(&dir.join(format!("{scenario}-{arm}-wall-time-heatmap")))?),
                Err(why) => out.skipped.push(why),
            }
        }
    }
    Ok(out)
}

/// Step functions: hold each value until the next change.
fn steps(rows: &[TimelineRow], f: &dyn Fn(&TimelineRow) -> f64) -> Vec<(f64, f64)> {
    let t = |r: &TimelineRow| r.time_ns as f64 / 1e9;
    let mut pts = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        if i > 0 {
            pts.push((t(r), f(&rows[i - 1])));
        }
        pts.push((t(r), f(r)));
    }
    pts
}

const MIB: f64 = 1024.0 * 1024.0;

fn panel(title: &str, y: &str, series: Vec<Series>) -> LineChart {
    LineChart {
        title: title.into(),
        x_label: "time (s)".into(),
        y_label: y.into(),
        series,
        ..LineChart::default()
    }
}

fn concurrency_panel(rows: &[TimelineRow]) -> LineChart {
    panel(
        "concurrency",
        "requests",
        vec![
            Series::line("GETs in flight", steps(rows, &|r| r.concurrent_gets as f64)),
            Series::line("reads queued", steps(rows, &|r| r.reads_queued as f64)),
        ],
    )
}

fn in_flight_panel(rows: &[TimelineRow]) -> LineChart {
    let mut series = vec![Series::line(
        "in flight",
        steps(rows, &|r| r.bytes_in_flight as f64 / MIB),
    )];
    // Only readers with a bytes-in-flight target (R5) have a target to draw.
    if rows.iter().any(|r| r.target_bytes_in_flight > 0) {
        // Each open file has its own target: the line is their sum.
        series.push(Series::line(
            "target (open files)",
            steps(rows, &|r| r.target_bytes_in_flight as f64 / MIB),
        ));
    }
    panel("bytes in flight", "MiB", series)
}

/// Pool memory in the unit that fits its peak; a line per pool that held anything (the other
/// generation's pools stay at 0), or one line at 0 when none did.
fn memory_panel(rows: &[TimelineRow]) -> LineChart {
    let peak = rows
        .iter()
        .flat_map(|r| r.memory.iter().map(|m| m.1))
        .max()
        .unwrap_or(0) as f64;
    let (div, unit) = if peak >= (1u64 << 30) as f64 {
        ((1u64 << 30) as f64, "GiB")
    } else if peak >= MIB {
        (MIB, "MiB")
    } else {
        (1024.0, "KiB")
    };
    let pools = rows.first().map_or(0, |r| r.memory.len());
    let held = |pi: usize| {
        rows.iter()
            .any(|r| r.memory.get(pi).is_some_and(|m| m.1 > 0))
    };
    let mut series: Vec<Series> = (0..pools)
        .filter(|&pi| held(pi))
        .map(|pi| {
            let name = rows[0].memory[pi].0.clone();
            Series::line(
                name,
                steps(rows, &|r| {
                    r.memory.get(pi).map_or(0.0, |m| m.1 as f64 / div)
                }),
            )
        })
        .collect();
    if series.is_empty() {
        series.push(Series::line("every pool", steps(rows, &|_| 0.0)));
    }
    panel("pool memory", unit, series)
}

/// What a timeline leaves out because the reader does not track it, for the subtitle.
fn untracked(tracked: planner::Tracked) -> Option<String> {
    let missing: Vec<&str> = [
        (!tracked.bytes_in_flight).then_some("bytes in flight"),
        (!tracked.memory).then_some("pool memory"),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!missing.is_empty()).then(|| format!("{}: not tracked for this reader", missing.join(" and ")))
}

/// The timeline of one run: concurrency, and the bytes in flight and pool memory where the
/// reader tracks them (a peer program does not: those panels are left out, and the subtitle
/// says so).
pub fn timeline_plot(
    rows: &[TimelineRow],
    title: &str,
    stem: &Path,
) -> Result<Vec<PathBuf>, ChartError> {
    let Some(first) = rows.first() else {
        return Err(ChartError::Empty(title.to_string()));
    };
    let tracked = first.tracked;
    let mut panels = vec![concurrency_panel(rows)];
    if tracked.bytes_in_flight {
        panels.push(in_flight_panel(rows));
    }
    if tracked.memory {
        panels.push(memory_panel(rows));
    }
    Panels {
        title: title.into(),
        subtitle: untracked(tracked),
        panels,
    }
    .save(stem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Summary;

    fn bytes_axis(name: &str, values: &[&str], numeric: &[f64]) -> Axis {
        Axis {
            name: name.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
            numeric: numeric.to_vec(),
            kind: Kind::Bytes,
        }
    }

    fn summary(mean: f64) -> Summary {
        Summary {
            n: 1,
            mean,
            std: 0.0,
            ci95: 0.0,
        }
    }

    /// The many-small-files shape: the gap reaches redesign and floor-0, the floor only
    /// redesign, neither base. Wall time in seconds (as ns) differs per point for the arms
    /// that apply a setting; base is the same run everywhere.
    fn sweep() -> SweepResult {
        let gap = bytes_axis(
            "gap",
            &["64KiB", "256KiB", "1MiB"],
            &[65536.0, 262144.0, 1048576.0],
        );
        let floor = bytes_axis(
            "arms.redesign.settings.floor",
            &["0", "256KiB"],
            &[0.0, 262144.0],
        );
        let mut rows = Vec::new();
        for (point, (xi, yi)) in [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
            .into_iter()
            .enumerate()
        {
            for arm in ["base", "redesign", "floor-0"] {
                let values = match arm {
                    "base" => vec!["-".to_string(), "-".to_string()],
                    "redesign" => vec![gap.values[xi].clone(), floor.values[yi].clone()],
                    _ => vec![gap.values[xi].clone(), "-".to_string()],
                };
                let wall = match arm {
                    "base" => 9.0,
                    "redesign" => 1.0 + xi as f64 + 0.5 * yi as f64,
                    _ => 2.0 + xi as f64,
                } * 1e9;
                rows.push(SweepRow {
                    point,
                    coords: vec![xi, yi],
                    values,
                    arm: arm.into(),
                    strategy: String::new(),
                    summaries: SWEEP_METRICS.iter().map(|m| (*m, summary(wall))).collect(),
                });
            }
        }
        SweepResult {
            axes: vec![gap, floor],
            case: "default".into(),
            rows,
            points_run: 6,
            points_resumed: 0,
            points_in_file: 6,
            notes: Vec::new(),
        }
    }

    #[test]
    fn an_arm_that_does_not_apply_the_x_setting_is_a_flat_reference_line() {
        let r = sweep();
        let chart = metric_chart(&r, "msf", Metric::WallTime);
        let base = &chart.series[0];
        assert_eq!(base.name, "base (setting not applied)");
        assert_eq!(base.kind, SeriesKind::Reference);
        assert_eq!(
            base.points,
            vec![(0.0, 9.0), (2.0, 9.0)],
            "across the axis, flat"
        );
        let redesign = &chart.series[1];
        assert_eq!(
            (redesign.name.as_str(), redesign.kind),
            ("redesign", SeriesKind::Line)
        );
        assert_eq!(redesign.points, vec![(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]);
        assert_eq!(
            chart.series[2].points,
            vec![(0.0, 2.0), (1.0, 3.0), (2.0, 4.0)]
        );
    }

    #[test]
    fn the_other_axis_is_stated_per_arm() {
        let r = sweep();
        assert_eq!(
            at_clause(&r).as_deref(),
            Some(
                "at arms.redesign.settings.floor=0 for redesign; \
                 arms.redesign.settings.floor not applied for base, floor-0"
            )
        );
        // An axis every arm applies alike is stated once.
        assert_eq!(
            axis_clause("gap", &[("1MiB".into(), vec!["a", "b"])]),
            "gap=1MiB"
        );
        assert_eq!(
            at_clause(&SweepResult {
                axes: r.axes[..1].to_vec(),
                ..sweep()
            }),
            None
        );
    }

    #[test]
    fn no_heatmap_for_an_arm_that_applies_an_axis_nowhere() {
        let r = sweep();
        let base = wall_time_heatmap(&r, "msf", "base").unwrap_err();
        assert!(
            base.contains("gap or arms.redesign.settings.floor"),
            "{base}"
        );
        let floor0 = wall_time_heatmap(&r, "msf", "floor-0").unwrap_err();
        assert!(
            floor0.ends_with("does not apply arms.redesign.settings.floor"),
            "{floor0}"
        );
        let h = wall_time_heatmap(&r, "msf", "redesign").unwrap();
        assert_eq!(h.z, vec![vec![1.0, 2.0, 3.0], vec![1.5, 2.5, 3.5]]);
        assert_eq!(h.subtitle, None);
        let dir = std::env::temp_dir().join(format!("sweep-plots-{}", std::process::id()));
        let plots = sweep_plots(&r, "msf", &dir).unwrap();
        let names: Vec<String> = plots
            .paths
            .iter()
            .filter_map(|p| Some(p.file_name()?.to_string_lossy().into_owned()))
            .filter(|n| n.contains("heatmap"))
            .collect();
        assert_eq!(
            names,
            [
                "msf-redesign-wall-time-heatmap.png",
                "msf-redesign-wall-time-heatmap.svg"
            ]
        );
        assert_eq!(plots.skipped, [base, floor0]);
    }

    #[test]
    fn an_axis_through_zero_is_linear() {
        let mut r = sweep();
        r.axes[0] = Axis {
            kind: Kind::Number,
            ..bytes_axis("threads", &["0", "10", "1000"], &[0.0, 10.0, 1000.0])
        };
        assert!(!metric_chart(&r, "msf", Metric::WallTime).log_x);
        r.axes[0].numeric = vec![1.0, 10.0, 1000.0];
        assert!(metric_chart(&r, "msf", Metric::WallTime).log_x);
    }

    fn timeline(tracked: bool) -> Vec<TimelineRow> {
        (0..5u64)
            .map(|i| TimelineRow {
                time_ns: i * 1_000_000,
                concurrent_gets: i % 3,
                bytes_in_flight: if tracked { i * 1024 * 1024 } else { 0 },
                target_bytes_in_flight: 0,
                reads_running: i % 3,
                reads_queued: 1,
                memory: vec![("pool".into(), if tracked { i * 4096 } else { 0 })],
                tracked: planner::Tracked {
                    bytes_in_flight: tracked,
                    memory: tracked,
                },
            })
            .collect()
    }

    #[test]
    fn a_timeline_leaves_out_what_the_reader_does_not_track() {
        let dir = std::env::temp_dir().join(format!("timeline-plots-{}", std::process::id()));
        let peer = timeline_plot(&timeline(false), "peer", &dir.join("peer")).unwrap();
        let svg = std::fs::read_to_string(&peer[1]).unwrap();
        assert!(svg.contains("concurrency"));
        assert!(!svg.contains(">bytes in flight<") && !svg.contains("pool memory<"));
        assert!(svg.contains("bytes in flight and pool memory: not tracked for this reader"));
        let ours = timeline_plot(&timeline(true), "ours", &dir.join("ours")).unwrap();
        let svg = std::fs::read_to_string(&ours[1]).unwrap();
        assert!(svg.contains("bytes in flight") && svg.contains("pool memory"));
        assert!(!svg.contains("not tracked"));
    }
}
