//! Reports: per case, the arms side by side (baseline = first arm, deltas in %), as a table for
//! people, JSON or CSV for machines.

pub mod stats;

pub use drive::metric::{Metric, RunMetrics, Unit};
pub use stats::Summary;

use serde::Serialize;
use std::fmt::Write as _;

/// One arm's result in one case: every replication's metrics and their summary.
#[derive(Debug, Clone, Serialize)]
pub struct ArmReport {
    pub arm: String,
    pub strategy: String,
    /// The settings this arm ran with that differ from its preset's defaults, `name = value`.
    pub settings: Vec<String>,
    pub runs: Vec<RunMetrics>,
    /// Per-query breakdown of replication 0 (name, metrics), when the scenario has several queries.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_query: Vec<(String, RunMetrics)>,
}

impl ArmReport {
    /// (metric, summary over replications), in report order; empty without runs.
    pub fn summaries(&self) -> Vec<(Metric, Summary)> {
        if self.runs.is_empty() {
            return Vec::new();
        }
        Metric::all().map(|m| (m, self.summary(m))).collect()
    }

    /// One metric over the replications.
    pub fn summary(&self, metric: Metric) -> Summary {
        let values: Vec<f64> = self.runs.iter().map(|r| r.value(metric)).collect();
        Summary::of(&values)
    }

    /// The mean of one metric over the replications.
    pub fn mean(&self, metric: Metric) -> f64 {
        self.summary(metric).mean
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseReport {
    pub case: String,
    /// The root seed this case ran with (a case's `set:` may give its own).
    pub seed: u64,
    /// The replications of each arm (a case's `set:` may give its own).
    pub replications: u32,
    pub arms: Vec<ArmReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub scenario: String,
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
                case.seed,
                case.replications,
                if case.replications == 1 { "" } else { "s" }
            );
            out.push_str(&side_by_side(&case.arms));
            for a in case.arms.iter().filter(|a| !a.settings.is_empty()) {
                let _ = writeln!(
                    out,
                    "{} ({}) ran with: {}",
                    a.arm,
                    a.strategy,
                    a.settings.join(", ")
                );
            }
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
                for (metric, s) in arm.summaries() {
                    w.write_record([
                        self.scenario.as_str(),
                        case.case.as_str(),
                        arm.arm.as_str(),
                        arm.strategy.as_str(),
                        metric.name(),
                        metric.unit().name(),
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
            settings: &'a [String],
            metrics: Vec<MetricJson>,
            /// Which replication `per_query` breaks down (it is one run's, not the mean the
            /// metrics beside it are): said in the JSON, which had only a code comment.
            #[serde(skip_serializing_if = "Option::is_none")]
            per_query_replication: Option<u32>,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            per_query: &'a Vec<(String, RunMetrics)>,
        }
        #[derive(Serialize)]
        struct MetricJson {
            name: &'static str,
            unit: Unit,
            #[serde(flatten)]
            summary: Summary,
        }
        #[derive(Serialize)]
        struct CaseJson<'a> {
            case: &'a str,
            seed: u64,
            replications: u32,
            arms: Vec<ArmJson<'a>>,
        }
        #[derive(Serialize)]
        struct ReportJson<'a> {
            scenario: &'a str,
            cases: Vec<CaseJson<'a>>,
        }
        let r = ReportJson {
            scenario: &self.scenario,
            cases: self
                .cases
                .iter()
                .map(|c| CaseJson {
                    case: &c.case,
                    seed: c.seed,
                    replications: c.replications,
                    arms: c
                        .arms
                        .iter()
                        .map(|a| ArmJson {
                            arm: &a.arm,
                            strategy: &a.strategy,
                            settings: &a.settings,
                            metrics: a
                                .summaries()
                                .into_iter()
                                .map(|(m, summary)| MetricJson {
                                    name: m.name(),
                                    unit: m.unit(),
                                    summary,
                                })
                                .collect(),
                            per_query_replication: (!a.per_query.is_empty()).then_some(0),
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
    let all: Vec<Vec<(Metric, Summary)>> = arms.iter().map(|a| a.summaries()).collect();
    let find =
        |sums: &[(Metric, Summary)], m: Metric| sums.iter().find(|(n, _)| *n == m).map(|x| x.1);
    for metric in Metric::all() {
        let unit = metric.unit();
        let bs = find(&base_summaries, metric);
        let mut row = vec![metric.name().to_string()];
        for (ai, sums) in all.iter().enumerate() {
            let Some(s) = find(sums, metric) else {
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
            settings: Vec::new(),
            runs: wall
                .iter()
                .map(|w| {
                    let mut m = RunMetrics::default();
                    m.set(Metric::WallTime, *w);
                    m.set(Metric::Gets, 10.0);
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
            cases: vec![CaseReport {
                case: "default".into(),
                seed: 1,
                replications: 2,
                arms: vec![arm("a", &[1.0, 3.0])],
            }],
        };
        let csv = r.to_csv().unwrap();
        assert_eq!(
            csv.lines().count(),
            1 + drive::metric::METRIC_COUNT,
            "{csv}"
        );
        assert!(csv.contains("wall_time,nanoseconds,2,2,"), "{csv}");
    }
}
