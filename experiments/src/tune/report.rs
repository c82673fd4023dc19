//! What `sim tune` prints: the proposal (a `SETTINGS` line and YAML), a comparison with the
//! defaults, the base generation and Arrow C++'s network-metrics rule, and a robustness view.

use super::{
    scale_store, settings_line, settings_yaml, tune, Evaluator, Measured, Target, TuneError,
    TuneOptions, TuneResult,
};
use crate::report::render_rows;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub struct TuneOutput {
    pub result: TuneResult,
    pub text: String,
}

fn secs(ns: f64) -> String {
    units::format_duration_f(ns)
}

fn total(m: &[Measured]) -> f64 {
    m.iter().map(|x| x.wall_ns).sum()
}

/// Arrow C++'s `MakeFromNetworkMetrics` applied to a store model: hole = TTFB x BW, range =
/// min(64 MiB, hole x 0.9 / 0.1), from the model's median first byte and per-stream bandwidth
/// in the whole milliseconds and MiB/s the function takes (`int64_t`; at least 1 each, which
/// its `DCHECK`s require), and its `lazy = false`: every coalesced read issued when the file is
/// pre-buffered. `None` for a store with no median, mean or value of either (an empirical
/// fit): the row is then not computed, rather than computed from stand-in figures (30 ms and
/// 64 MB/s were).
pub fn arrow_cpp_settings(store: &models::store::StoreSpec) -> Option<Vec<(String, String)>> {
    let ttfb_ns = store
        .first_byte
        .median
        .or(store.first_byte.mean)
        .or(store.first_byte.value)
        .map(|d| d.0)?;
    let bw = store
        .stream_bandwidth
        .median
        .or(store.stream_bandwidth.mean)
        .or(store.stream_bandwidth.value)
        .map(|b| b.0)?;
    let ttfb_ms = ((ttfb_ns as f64 / 1e6).round() as u64).max(1);
    let mib_per_s = ((bw / (1024.0 * 1024.0)).round() as u64).max(1);
    let (hole, range) = coalescer::arrow_cpp_from_network_metrics(
        ttfb_ms * 1_000_000,
        (mib_per_s * 1024 * 1024) as f64,
    );
    Some(vec![
        (
            planner::settings::CACHE_LAZY.to_string(),
            "false".to_string(),
        ),
        (
            planner::settings::HOLE_SIZE_LIMIT.to_string(),
            units::format_bytes(hole),
        ),
        (
            planner::settings::RANGE_SIZE_LIMIT.to_string(),
            units::format_bytes(range),
        ),
    ])
}

pub fn tune_and_report(targets: &[Target], opts: &TuneOptions) -> Result<TuneOutput, TuneError> {
    let result = tune(targets, opts)?;
    let eval = Evaluator::new(targets, opts.reps);
    let mut text = String::new();
    let best = &result.best;
    let _ = writeln!(
        text,
        "# best of {} evaluations (objective {:.4} of the defaults; lower is better)",
        result.history.len(),
        best.objective
    );
    let _ = writeln!(text, "{}", settings_line(best, &opts.params));
    let _ = writeln!(text);
    text.push_str(&settings_yaml(best));
    let _ = writeln!(text);

    // Comparison, per target and in total.
    let base = eval.measure(&[], Some("clickhouse-base"))?;
    // Each scenario with the rule applied to its own store (the first one's was used for all).
    let mut arrow: Vec<Option<Measured>> = Vec::with_capacity(targets.len());
    let tables = scenario::TableCache::default();
    for t in targets {
        let store = scenario::resolve(&t.scenario, &tables)?.store;
        match arrow_cpp_settings(&store) {
            Some(settings) => {
                let one = Evaluator::new(std::slice::from_ref(t), opts.reps);
                arrow.push(one.measure(&settings, Some("arrow-cpp"))?.first().copied());
            }
            None => {
                let _ = writeln!(
                    text,
                    "# note: {}: no arrow-cpp row: its store has no median, mean or value of \
                     first byte and bandwidth for MakeFromNetworkMetrics",
                    t.label
                );
                arrow.push(None);
            }
        }
    }
    let arrow_all: Option<Vec<Measured>> = arrow.iter().copied().collect();
    let tuned_strategy = targets
        .first()
        .map(|t| t.strategy_name())
        .unwrap_or_default();
    if !result.defaults.feasible {
        let _ = writeln!(
            text,
            "# note: the {tuned_strategy} defaults break --max-memory themselves (peak {}); {}",
            units::format_bytes(
                result
                    .defaults
                    .measured
                    .iter()
                    .map(|m| m.peak_memory_bytes)
                    .fold(0.0, f64::max) as u64
            ),
            if result.best.feasible && !result.best.settings.is_empty() {
                "the proposal keeps under the cap"
            } else {
                "no setting tried keeps under the cap"
            }
        );
    }
    let mut rows = vec![vec![
        "scenario".to_string(),
        "tuned".to_string(),
        format!("{tuned_strategy} defaults"),
        "clickhouse-base".to_string(),
        "arrow-cpp (network metrics)".to_string(),
    ]];
    let delta = |x: f64, d: f64| {
        if d > 0.0 {
            format!(" ({:+.1}%)", (x / d - 1.0) * 100.0)
        } else {
            String::new()
        }
    };
    for (i, t) in targets.iter().enumerate() {
        let d = result.defaults.measured[i].wall_ns;
        let tuned = best.measured.get(i).map(|m| m.wall_ns).unwrap_or(d);
        rows.push(vec![
            t.label.clone(),
            format!("{}{}", secs(tuned), delta(tuned, d)),
            secs(d),
            format!("{}{}", secs(base[i].wall_ns), delta(base[i].wall_ns, d)),
            arrow
                .get(i)
                .copied()
                .flatten()
                .map(|a| format!("{}{}", secs(a.wall_ns), delta(a.wall_ns, d)))
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    if targets.len() > 1 {
        let d = total(&result.defaults.measured);
        let tuned = if best.measured.is_empty() {
            d
        } else {
            total(&best.measured)
        };
        rows.push(vec![
            "total".into(),
            format!("{}{}", secs(tuned), delta(tuned, d)),
            secs(d),
            format!("{}{}", secs(total(&base)), delta(total(&base), d)),
            arrow_all
                .as_ref()
                .map(|a| format!("{}{}", secs(total(a)), delta(total(a), d)))
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    let _ = writeln!(
        text,
        "# wall time (deltas against the {tuned_strategy} defaults)"
    );
    text.push_str(&render_rows(&rows));

    // Robustness: the same proposal when the store is 2x off the model.
    let _ = writeln!(
        text,
        "\n# robustness: if the store's latency or bandwidth is 2x off the model"
    );
    let mut rows = vec![vec![
        "store".to_string(),
        "defaults".to_string(),
        "tuned".to_string(),
        "tuned vs defaults".to_string(),
    ]];
    for (label, lat, bw) in [
        ("as modelled", 1.0, 1.0),
        ("latency x2", 2.0, 1.0),
        ("latency x0.5", 0.5, 1.0),
        ("bandwidth x2", 1.0, 2.0),
        ("bandwidth x0.5", 1.0, 0.5),
    ] {
        let mut e = Evaluator::new(targets, opts.reps);
        e.adjust = Some(Box::new(move |r: &mut scenario::Resolved| {
            scale_store(&mut r.store, lat, bw)
        }));
        let d = total(&e.measure(&[], None)?);
        let t = total(&e.measure(&best.settings, None)?);
        rows.push(vec![
            label.into(),
            secs(d),
            secs(t),
            format!("{:+.1}%", (t / d - 1.0) * 100.0),
        ]);
    }
    text.push_str(&render_rows(&rows));
    Ok(TuneOutput { result, text })
}

/// Every evaluation of the search in order, as CSV (`sim tune --history`): `evaluation` (from
/// 1); `objective`, what it measured (the objective's ratio to the defaults, also over the
/// memory cap); `search_objective`, what the search was given to minimise (the objective, or for
/// an evaluation over the cap its penalty, 1000 times how far over); `best_so_far`, the best
/// objective of the evaluations under the cap so far (empty before the first); `feasible`; then
/// each parameter's value as it ran. (Until 2026-12-07 `objective` and `best_so_far` carried the
/// penalty, so a run whose first evaluations were over the cap printed 1000-odd as its best.)
pub fn history_csv(result: &TuneResult, opts: &TuneOptions) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = [
        "evaluation",
        "objective",
        "search_objective",
        "best_so_far",
        "feasible",
    ]
    .map(String::from)
    .into();
    header.extend(opts.params.iter().map(|p| p.name.clone()));
    w.write_record(&header)?;
    let base = &result.defaults.measured;
    let mut best_so_far: Option<f64> = None;
    for (i, (e, _)) in result.history.iter().enumerate() {
        let measured = super::score(opts.objective, &e.measured, base);
        if e.feasible {
            best_so_far = Some(best_so_far.map_or(measured, |b| b.min(measured)));
        }
        let mut row = vec![
            (i + 1).to_string(),
            measured.to_string(),
            e.objective.to_string(),
            best_so_far.map_or(String::new(), |b| b.to_string()),
            e.feasible.to_string(),
        ];
        row.extend(e.settings.iter().map(|(_, v)| v.clone()));
        w.write_record(&row)?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// What the objective measures, in words.
fn objective_text(objective: super::Objective) -> String {
    match objective {
        super::Objective::Time => "wall time".into(),
        super::Objective::Cost => "cost".into(),
        super::Objective::Mix(w) => format!("{w} x wall time + {} x cost", 1.0 - w),
    }
}

/// The search's progress: each evaluation under the memory cap and the best of them so far;
/// an evaluation over the cap is a series of its own at its objective without the penalty the
/// search gave it (the penalty, 1000 times how far over, is not a measurement), never counted
/// as best. `targets` name what was tuned: a scenario (or case) and its arm each.
fn convergence_chart(
    result: &TuneResult,
    targets: &[String],
    opts: &TuneOptions,
) -> charts::LineChart {
    let base = &result.defaults.measured;
    let mut best: Vec<(f64, f64)> = Vec::new();
    let mut under: Vec<(f64, f64)> = Vec::new();
    let mut over: Vec<(f64, f64)> = Vec::new();
    let mut best_so_far = f64::INFINITY;
    for (i, (e, _)) in result.history.iter().enumerate() {
        let x = (i + 1) as f64;
        if e.feasible {
            under.push((x, e.objective));
            best_so_far = best_so_far.min(e.objective);
        } else {
            over.push((x, super::score(opts.objective, &e.measured, base)));
        }
        if best_so_far.is_finite() {
            best.push((x, best_so_far));
        }
    }
    let evaluations = result.history.len() as f64;
    let cap = match opts.max_memory_bytes {
        Some(cap) => format!(
            "memory cap {} ({} of {} evaluations over it)",
            units::format_bytes(cap),
            over.len(),
            result.history.len()
        ),
        None => "no memory cap".into(),
    };
    let under_cap = if opts.max_memory_bytes.is_some() {
        " under the cap"
    } else {
        ""
    };
    let over_name = opts.max_memory_bytes.map_or(String::new(), |cap| {
        format!("over {} (penalty left out)", units::format_bytes(cap))
    });
    let defaults = if result.defaults.feasible {
        "the defaults"
    } else {
        "the defaults (over the cap)"
    };
    let mut series = vec![
        charts::Series {
            kind: charts::SeriesKind::Reference,
            ..charts::Series::line(defaults, vec![(1.0, 1.0), (evaluations.max(1.0), 1.0)])
        },
        charts::Series::line(format!("best so far{under_cap}"), best),
        charts::Series {
            kind: charts::SeriesKind::Points,
            ..charts::Series::line(format!("each evaluation{under_cap}"), under)
        },
    ];
    series.push(charts::Series {
        kind: charts::SeriesKind::Points,
        ..charts::Series::line(over_name, over)
    });
    // A series with no point (nothing under the cap, or over it) has no place in the legend.
    series.retain(|s| !s.points.is_empty());
    charts::LineChart {
        title: "sim tune: convergence".into(),
        subtitle: Some(format!(
            "{}; objective: {} relative to the defaults{}; {cap}",
            targets.join(", "),
            objective_text(opts.objective),
            if targets.len() > 1 {
                " (geometric mean over the scenarios)"
            } else {
                ""
            },
        )),
        x_label: "evaluations".into(),
        y_label: "objective (the defaults = 1)".into(),
        series,
        ..charts::LineChart::default()
    }
}

/// Writes `tune-convergence.png` and `.svg` into `dir` (see [`convergence_chart`]).
pub fn convergence_plot(
    result: &TuneResult,
    targets: &[Target],
    opts: &TuneOptions,
    dir: &Path,
) -> Result<Vec<PathBuf>, charts::ChartError> {
    let names: Vec<String> = targets
        .iter()
        .map(|t| format!("{} (arm {})", t.label, t.arm_name))
        .collect();
    convergence_chart(result, &names, opts).save(&dir.join("tune-convergence"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store without a central figure gets no Arrow C++ row (it was computed from 30 ms and
    /// 64 MB/s stand-ins, silently); a preset gets the rule's two settings from its own figures.
    #[test]
    fn the_network_metrics_rule_needs_the_stores_own_figures() {
        let s3 = models::store::StoreSpec::preset("s3-standard").unwrap();
        let settings = arrow_cpp_settings(&s3).unwrap();
        assert_eq!(settings.len(), 3);
        // MakeFromNetworkMetrics returns a cache that is not lazy.
        assert!(settings.contains(&("lazy".to_string(), "false".to_string())));
        let nvme = models::store::StoreSpec::preset("local-nvme").unwrap();
        assert_ne!(arrow_cpp_settings(&nvme), Some(settings));
        let mut empirical = s3.clone();
        empirical.first_byte.median = None;
        empirical.first_byte.mean = None;
        empirical.first_byte.value = None;
        assert_eq!(arrow_cpp_settings(&empirical), None);
    }

    fn evaluation(wall: f64, peak: f64, cap: f64) -> super::super::Evaluation {
        let m = Measured {
            wall_ns: wall,
            cost_usd: 1.0,
            peak_memory_bytes: peak,
        };
        let base = Measured {
            wall_ns: 10.0,
            cost_usd: 1.0,
            peak_memory_bytes: 1.0,
        };
        super::super::evaluation(
            Vec::new(),
            vec![m],
            &[base],
            super::super::Objective::Time,
            Some(cap as u64),
        )
    }

    /// Evaluations over the memory cap are their own series at their unpenalised objective
    /// (the penalty, 1000x and more, was drawn as if measured, or they were dropped unsaid),
    /// and "best so far" is over the evaluations under the cap only.
    #[test]
    fn the_convergence_plot_keeps_the_penalty_off_its_scale() {
        let history: Vec<_> = [(5.0, 200.0), (8.0, 50.0), (4.0, 300.0), (6.0, 60.0)]
            .into_iter()
            .map(|(wall, peak)| (evaluation(wall, peak, 100.0), 0.0))
            .collect();
        assert!(history[0].0.objective >= 1000.0, "the search's penalty");
        let result = TuneResult {
            defaults: evaluation(10.0, 1.0, 100.0),
            best: history[1].0.clone(),
            history,
            notes: Vec::new(),
        };
        let opts = TuneOptions {
            params: Vec::new(),
            objective: super::super::Objective::Time,
            max_memory_bytes: Some(100),
            budget: 4,
            seed: 0,
            arm: None,
            reps: None,
            progress: false,
        };
        let chart = convergence_chart(&result, &["msf (arm redesign)".into()], &opts);
        let series = |name: &str| {
            chart
                .series
                .iter()
                .find(|s| s.name == name)
                .unwrap_or_else(|| panic!("no series {name}"))
                .points
                .clone()
        };
        assert_eq!(
            series("best so far under the cap"),
            vec![(2.0, 0.8), (3.0, 0.8), (4.0, 0.6)]
        );
        assert_eq!(
            series("each evaluation under the cap"),
            vec![(2.0, 0.8), (4.0, 0.6)]
        );
        assert_eq!(
            series("over 100B (penalty left out)"),
            vec![(1.0, 0.5), (3.0, 0.4)]
        );
        let subtitle = chart.subtitle.unwrap();
        assert!(subtitle.contains("msf (arm redesign)"), "{subtitle}");
        assert!(
            subtitle.contains("objective: wall time relative to the defaults"),
            "{subtitle}"
        );
        assert!(
            subtitle.contains("memory cap 100B (2 of 4 evaluations over it)"),
            "{subtitle}"
        );
        // The history says the same: measured objective, the penalty apart, best over the
        // evaluations under the cap (none before the second).
        let csv = history_csv(&result, &opts).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "evaluation,objective,search_objective,best_so_far,feasible"
        );
        assert!(lines[1].starts_with("1,0.5,2000,,false"), "{csv}");
        assert_eq!(lines[2], "2,0.8,0.8,0.8,true");
        assert!(lines[3].starts_with("3,0.4,3000,0.8,false"), "{csv}");
        assert_eq!(lines[4], "4,0.6,0.6,0.6,true");
        // Without a cap, every evaluation counts and no name speaks of one.
        let uncapped = TuneOptions {
            max_memory_bytes: None,
            ..opts
        };
        let base = result.defaults.measured.clone();
        let history = result
            .history
            .iter()
            .map(|(e, b)| {
                let mut e = e.clone();
                e.feasible = true;
                e.objective = super::super::score(uncapped.objective, &e.measured, &base);
                (e, *b)
            })
            .collect();
        let result = TuneResult { history, ..result };
        let chart = convergence_chart(&result, &["msf (arm redesign)".into()], &uncapped);
        let names: Vec<&str> = chart.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["the defaults", "best so far", "each evaluation"]);
        assert_eq!(chart.series[1].points.last(), Some(&(4.0, 0.4)));
        assert!(chart.subtitle.unwrap().ends_with("no memory cap"));
    }
}
