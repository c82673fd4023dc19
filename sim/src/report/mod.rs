//! Reports: per case, the arms side by side (baseline = first arm, deltas in %), as a table for
//! people, JSON or CSV for machines.

pub mod metrics;
pub mod stats;

pub use metrics::{Metric, RunMetrics, Unit};
pub use stats::Summary;

use serde::Serialize;
use std::fmt::Write as _;

/// One arm's result in one case: every replication's metrics and their summary.
#[derive(Debug, Clone, Serialize)]
pub struct ArmReport {
    pub arm: String,
    pub strategy: String,
    pub runs: Vec<RunMetrics>,
    /// Per-query breakdown of replication 0 (name, metrics), when the scenario has several queries.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_query: Vec<(String, RunMetrics)>,
}

impl ArmReport {
    /// (metric, unit, summary over replications), in the metrics' order.
    pub fn summaries(&self) -> Vec<(String, Unit, Summary)> {
        let Some(first) = self.runs.first() else {
            return Vec::new();
        };
        first
            .metrics
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let values: Vec<f64> = self
                    .runs
                    .iter()
                    .filter_map(|r| r.metrics.get(i).map(|x| x.value))
                    .collect();
                (m.name.clone(), m.unit, Summary::of(&values))
            })
            .collect()
    }

    pub fn mean(&self, metric: &str) -> Option<f64> {
        self.summaries()
            .into_iter()
            .find(|(n, _, _)| n == metric)
            .map(|(_, _, s)| s.mean)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseReport {
    pub case: String,
    pub arms: Vec<ArmReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub scenario: String,
    pub seed: u64,
    pub replications: u32,
    pub cases: Vec<CaseReport>,
}

impl Report {
    pub fn case(&self, name: &str) -> Option<&CaseReport> {
        self.cases.iter().find(|c| c.case == name)
    }

    /// The side-by-side table for people.
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        for case in &self.cases {
            let _ = writeln!(
                out,
                "{} / {}  (seed {}, {} replication{})",
                self.scenario,
                case.case,
                self.seed,
                self.replications,
                if self.replications == 1 { "" } else { "s" }
            );
            out.push_str(&side_by_side(&case.arms));
            out.push('\n');
        }
        out
    }

    /// One CSV row per (case, arm, metric) with mean, std and the CI half-width.
    pub fn to_csv(&self) -> Result<String, csv::Error> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record([
            "scenario", "case", "arm", "strategy", "metric", "unit", "n", "mean", "std", "ci95",
        ])?;
        for case in &self.cases {
            for arm in &case.arms {
                for (name, unit, s) in arm.summaries() {
                    w.write_record([
                        self.scenario.as_str(),
                        case.case.as_str(),
                        arm.arm.as_str(),
                        arm.strategy.as_str(),
                        name.as_str(),
                        &serde_json::to_value(unit)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default(),
                        &s.n.to_string(),
                        &format!("{}", s.mean),
                        &format!("{}", s.std),
                        &format!("{}", s.ci95),
                    ])?;
                }
            }
        }
        let bytes = w.into_inner().map_err(|e| e.into_error())?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct ArmJson<'a> {
            arm: &'a str,
            strategy: &'a str,
            metrics: Vec<MetricJson>,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            per_query: &'a Vec<(String, RunMetrics)>,
        }
        #[derive(Serialize)]
        struct MetricJson {
            name: String,
            unit: Unit,
            #[serde(flatten)]
            summary: Summary,
        }
        #[derive(Serialize)]
        struct CaseJson<'a> {
            case: &'a str,
            arms: Vec<ArmJson<'a>>,
        }
        #[derive(Serialize)]
        struct ReportJson<'a> {
            scenario: &'a str,
            seed: u64,
            replications: u32,
            cases: Vec<CaseJson<'a>>,
        }
        let r = ReportJson {
            scenario: &self.scenario,
            seed: self.seed,
            replications: self.replications,
            cases: self
                .cases
                .iter()
                .map(|c| CaseJson {
                    case: &c.case,
                    arms: c
                        .arms
                        .iter()
                        .map(|a| ArmJson {
                            arm: &a.arm,
                            strategy: &a.strategy,
                            metrics: a
                                .summaries()
                                .into_iter()
                                .map(|(name, unit, summary)| MetricJson {
                                    name,
                                    unit,
                                    summary,
                                })
                                .collect(),
                            per_query: &a.per_query,
                        })
                        .collect(),
                })
                .collect(),
        };
        serde_json::to_string_pretty(&r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }
}

/// Metrics as rows, arms as columns; every arm after the first shows its delta to the first.
pub fn side_by_side(arms: &[ArmReport]) -> String {
    let Some(base) = arms.first() else {
        return String::from("(no arms)\n");
    };
    let base_summaries = base.summaries();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut header = vec!["metric".to_string()];
    header.extend(arms.iter().map(|a| format!("{} ({})", a.arm, a.strategy)));
    rows.push(header);
    let all: Vec<Vec<(String, Unit, Summary)>> = arms.iter().map(|a| a.summaries()).collect();
    // Rows by name, in the order names first appear (arms may report different metrics).
    let mut names: Vec<(String, Unit)> = Vec::new();
    for sums in &all {
        for (n, u, _) in sums {
            if !names.iter().any(|(x, _)| x == n) {
                names.push((n.clone(), *u));
            }
        }
    }
    let find = |sums: &[(String, Unit, Summary)], name: &str| {
        sums.iter().find(|(n, _, _)| n == name).map(|x| x.2)
    };
    for (name, unit) in &names {
        let bs = find(&base_summaries, name);
        let mut row = vec![name.clone()];
        for (ai, sums) in all.iter().enumerate() {
            let Some(s) = find(sums, name) else {
                row.push("-".into());
                continue;
            };
            let mut cell = unit.format(s.mean);
            if s.n > 1 && s.ci95 > 0.0 {
                let _ = write!(cell, " ±{}", unit.format(s.ci95));
            }
            if ai > 0 {
                match bs {
                    Some(bs) if bs.mean.abs() > 1e-12 => {
                        let _ = write!(cell, " ({:+.1}%)", (s.mean / bs.mean - 1.0) * 100.0);
                    }
                    _ if s.mean.abs() > 1e-12 => cell.push_str(" (new)"),
                    _ => {}
                }
            }
            row.push(cell);
        }
        rows.push(row);
    }
    render_rows(&rows)
}

/// Left-aligned first column, right-aligned others, two spaces apart.
pub fn render_rows(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (ri, r) in rows.iter().enumerate() {
        for (c, cell) in r.iter().enumerate() {
            if c == 0 {
                let _ = write!(out, "{:<w$}", cell, w = widths[c]);
            } else {
                let _ = write!(out, "  {:>w$}", cell, w = widths[c]);
            }
        }
        out.push('\n');
        if ri == 0 {
            let total: usize = widths.iter().sum::<usize>() + 2 * cols.saturating_sub(1);
            out.push_str(&"-".repeat(total));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(name: &str, wall: &[f64]) -> ArmReport {
        ArmReport {
            arm: name.into(),
            strategy: "s".into(),
            runs: wall
                .iter()
                .map(|w| {
                    let mut m = RunMetrics::default();
                    m.push("wall_time", Unit::Nanoseconds, *w);
                    m.push("gets", Unit::Count, 10.0);
                    m
                })
                .collect(),
            per_query: vec![],
        }
    }

    #[test]
    fn deltas_against_first_arm() {
        let t = side_by_side(&[arm("base", &[10e9]), arm("redesign", &[8e9])]);
        assert!(t.contains("(-20.0%)"), "{t}");
        assert!(t.contains("wall_time"), "{t}");
    }

    #[test]
    fn csv_has_one_row_per_metric() {
        let r = Report {
            scenario: "x".into(),
            seed: 1,
            replications: 2,
            cases: vec![CaseReport {
                case: "default".into(),
                arms: vec![arm("a", &[1.0, 3.0])],
            }],
        };
        let csv = r.to_csv().unwrap();
        assert_eq!(csv.lines().count(), 3, "{csv}");
        assert!(csv.contains("wall_time,nanoseconds,2,2,"), "{csv}");
    }
}

/// Ratios are not additive: after adding up queries, recompute them from the totals.
pub fn recompute_ratios(m: &mut RunMetrics) {
    let get = |m: &RunMetrics, n: &str| m.get(n).unwrap_or(0.0);
    let div = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let wall = get(m, "wall_time");
    let values = [
        (
            "amplification_store_over_task",
            div(get(m, "store_bytes"), get(m, "task_bytes")),
        ),
        (
            "amplification_task_over_needed",
            div(get(m, "task_bytes"), get(m, "needed_bytes")),
        ),
        ("mean_concurrent_gets", div(get(m, "get_busy_time"), wall)),
        (
            "cpu_use",
            div(get(m, "decode_busy") + get(m, "consumer_busy"), wall),
        ),
    ];
    for (name, v) in values {
        if let Some(metric) = m.metrics.iter_mut().find(|x| x.name == name) {
            metric.value = v;
        }
    }
}
