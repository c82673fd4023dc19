//! Plots of sweeps and timelines (PNG and SVG, via the `charts` crate).

use crate::report::{Metric, Unit};
use crate::sweep::{Axis, Kind, SweepResult};
use charts::{ChartError, Heatmap, LineChart, Panels, Series};
use drive::TimelineRow;
use std::path::{Path, PathBuf};

/// Metrics plotted against a varied setting.
pub const SWEEP_METRICS: &[Metric] = &[Metric::WallTime, Metric::Gets, Metric::StoreBytes];

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

/// Writes the sweep's plots into `dir` and returns their paths: one line chart per metric for
/// the first axis (the other axes at their first value, stated in the title), and a heatmap
/// per arm when two axes vary. Titles name the scenario and the case. On an axis of sizes the
/// points sit at the swept values exactly as typed (`64KiB`, `1MiB`, ...).
pub fn sweep_plots(
    result: &SweepResult,
    scenario: &str,
    dir: &Path,
) -> Result<Vec<PathBuf>, ChartError> {
    let mut out = Vec::new();
    let Some(x_axis) = result.axes.first() else {
        return Ok(out);
    };
    let arms: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for r in &result.rows {
            if !v.contains(&r.arm) {
                v.push(r.arm.clone());
            }
        }
        v
    };
    let case = &result.case;
    // Rows where every other axis sits at its first value.
    let others_first = |coords: &[usize]| coords.iter().skip(1).all(|&i| i == 0);
    let fixed: Vec<String> = result
        .axes
        .iter()
        .skip(1)
        .map(|a| format!("{}={}", a.name, a.values.first().map_or("", String::as_str)))
        .collect();
    let categorical = x_axis.kind == Kind::Bytes || x_axis.kind == Kind::Text;
    for metric in SWEEP_METRICS {
        let name = metric.name();
        let mut series = Vec::new();
        let unit = metric.unit();
        for arm in &arms {
            let mut pts = Vec::new();
            let mut band = Vec::new();
            for row in result
                .rows
                .iter()
                .filter(|r| &r.arm == arm && others_first(&r.coords))
            {
                let Some(&xi) = row.coords.first() else {
                    continue;
                };
                let Some((_, s)) = row.summaries.iter().find(|(n, _)| n == metric) else {
                    continue;
                };
                let x = if categorical {
                    xi as f64
                } else {
                    axis_value(x_axis, xi)
                };
                pts.push((x, scale(unit, s.mean)));
                if s.n > 1 {
                    band.push((
                        x,
                        scale(unit, s.mean - s.ci95),
                        scale(unit, s.mean + s.ci95),
                    ));
                }
            }
            series.push(Series {
                name: arm.clone(),
                points: pts,
                band,
            });
        }
        let (unit_name, _) = unit_of(unit);
        let log_x = !categorical && charts::spans_decades(x_axis.numeric.iter().copied());
        let at = if fixed.is_empty() {
            String::new()
        } else {
            format!(" (at {})", fixed.join(", "))
        };
        let chart = LineChart {
            title: format!("{scenario} / {case}: {name} vs {}{at}", x_axis.name),
            x_label: axis_label(x_axis),
            y_label: if unit_name.is_empty() {
                name.to_string()
            } else {
                format!("{name} ({unit_name})")
            },
            series,
            log_x,
            log_y: false,
            x_format: axis_format(x_axis),
            y_format: None,
            x_ticks: categorical.then(|| x_axis.values.clone()),
        };
        out.extend(chart.save(&dir.join(format!("{scenario}-{name}-vs-{}", x_axis.name)))?);
    }
    if result.axes.len() == 2 {
        let y_axis = &result.axes[1];
        for arm in &arms {
            let mut z = vec![vec![f64::NAN; x_axis.values.len()]; y_axis.values.len()];
            for row in result.rows.iter().filter(|r| &r.arm == arm) {
                let s = row
                    .summaries
                    .iter()
                    .find(|(n, _)| *n == Metric::WallTime)
                    .map(|x| x.1.mean);
                if let (Some(&xi), Some(&yi), Some(s)) = (row.coords.first(), row.coords.get(1), s)
                {
                    if let Some(cell) = z.get_mut(yi).and_then(|r| r.get_mut(xi)) {
                        *cell = s / 1e9;
                    }
                }
            }
            let h = Heatmap {
                title: format!("{scenario} / {case} / {arm}: wall time"),
                x_label: axis_label(x_axis),
                y_label: axis_label(y_axis),
                x_ticks: x_axis.values.clone(),
                y_ticks: y_axis.values.clone(),
                z,
                z_label: "wall time (s)".into(),
                lower_is_better: true,
                z_format: |v| format!("{v:.2}s"),
            };
            out.extend(h.save(&dir.join(format!("{scenario}-{arm}-wall-time-heatmap")))?);
        }
    }
    Ok(out)
}

/// The timeline of one run: concurrency, bytes in flight, pool memory over time.
pub fn timeline_plot(
    rows: &[TimelineRow],
    title: &str,
    stem: &Path,
) -> Result<Vec<PathBuf>, ChartError> {
    let t = |r: &TimelineRow| r.time_ns as f64 / 1e9;
    // Step functions: hold each value until the next change.
    let steps = |f: &dyn Fn(&TimelineRow) -> f64| -> Vec<(f64, f64)> {
        let mut pts = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            if i > 0 {
                pts.push((t(r), f(&rows[i - 1])));
            }
            pts.push((t(r), f(r)));
        }
        pts
    };
    let mib = 1024.0 * 1024.0;
    // Pool memory in the unit that fits its peak.
    let peak = rows
        .iter()
        .flat_map(|r| r.memory.iter().map(|m| m.1))
        .max()
        .unwrap_or(0) as f64;
    let (mem_div, mem_unit) = if peak >= (1u64 << 30) as f64 {
        ((1u64 << 30) as f64, "GiB")
    } else if peak >= mib {
        (mib, "MiB")
    } else {
        (1024.0, "KiB")
    };
    let mut memory = Vec::new();
    if let Some(first) = rows.first() {
        for (pi, (pool, _)) in first.memory.iter().enumerate() {
            if rows
                .iter()
                .all(|r| r.memory.get(pi).map(|m| m.1).unwrap_or(0) == 0)
            {
                continue; // pools of the other generation
            }
            memory.push(Series {
                name: pool.clone(),
                points: steps(&|r: &TimelineRow| {
                    r.memory
                        .get(pi)
                        .map(|m| m.1 as f64 / mem_div)
                        .unwrap_or(0.0)
                }),
                band: vec![],
            });
        }
    }
    let panel = |title: &str, y: &str, series: Vec<Series>| LineChart {
        title: title.into(),
        x_label: "time (s)".into(),
        y_label: y.into(),
        series,
        log_x: false,
        log_y: false,
        x_format: None,
        y_format: None,
        x_ticks: None,
    };
    let mut in_flight = vec![Series {
        name: "in flight".into(),
        points: steps(&|r| r.bytes_in_flight as f64 / mib),
        band: vec![],
    }];
    // Only readers with a bytes-in-flight target (R5, Polars) have a target to draw.
    if rows.iter().any(|r| r.target_bytes_in_flight > 0) {
        in_flight.push(Series {
            name: "target".into(),
            points: steps(&|r| r.target_bytes_in_flight as f64 / mib),
            band: vec![],
        });
    }
    Panels {
        title: title.into(),
        panels: vec![
            panel(
                "concurrency",
                "requests",
                vec![
                    Series {
                        name: "GETs in flight".into(),
                        points: steps(&|r| r.concurrent_gets as f64),
                        band: vec![],
                    },
                    Series {
                        name: "reads queued".into(),
                        points: steps(&|r| r.reads_queued as f64),
                        band: vec![],
                    },
                ],
            ),
            panel("bytes in flight", "MiB", in_flight),
            panel("pool memory", mem_unit, memory),
        ],
    }
    .save(stem)
}
