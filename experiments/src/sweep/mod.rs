//! `sim sweep`: every point of a grid over settings or model parameters, every arm, with
//! replications on common random numbers (the same seeds at every point), in parallel.
//!
//! Rows are written in point order as soon as the points before them are done, and flushed, so
//! an interrupted sweep leaves a prefix of complete points; `--resume` keeps that prefix and runs
//! the rest. Because the order is fixed, the CSV does not depend on the thread count.

pub mod values;

use crate::report::{Metric, RunMetrics, Summary};
use crate::run::run_arm;
use scenario::{LoadedScenario, ScenarioError, TableCache};
use drive::Simulated;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
pub use values::{parse_vary, Axis, Kind, VaryError};

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error(transparent)]
    Vary(#[from] VaryError),
    #[error("point {point} ({what}): arm {arm}: {message}")]
    Run {
        point: usize,
        what: String,
        arm: String,
        message: String,
    },
    #[error("{path}: {message}")]
    Output { path: PathBuf, message: String },
    #[error("nothing to vary: give `--vary NAME=VALUES` or a `sweep:` section in the scenario")]
    NoAxes,
}

#[derive(Debug, Clone)]
pub struct SweepOptions {
    pub axes: Vec<Axis>,
    pub reps: Option<u32>,
    pub output: PathBuf,
    pub resume: bool,
    /// Which case of the scenario to sweep (the first when None).
    pub case: Option<String>,
    pub progress: bool,
}

/// One (point, arm) result.
#[derive(Debug, Clone)]
pub struct SweepRow {
    pub point: usize,
    pub values: Vec<String>,
    pub arm: String,
    pub strategy: String,
    pub summaries: Vec<(Metric, Summary)>,
}

pub struct SweepResult {
    pub axes: Vec<Axis>,
    pub rows: Vec<SweepRow>,
    pub points_run: usize,
    pub points_resumed: usize,
}

/// The axes of a sweep: `--vary` arguments, else the scenario's `sweep:` section.
pub fn axes_for(
    loaded: &LoadedScenario,
    vary: &[String],
) -> Result<(Vec<Axis>, Option<u32>), SweepError> {
    if !vary.is_empty() {
        let axes = vary
            .iter()
            .map(|v| parse_vary(v))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok((axes, None));
    }
    let Some(sweep) = &loaded.file.sweep else {
        return Err(SweepError::NoAxes);
    };
    let axes = sweep
        .vary
        .iter()
        .map(|(k, v)| values::parse_values(k, v, &format!("{k}={v}")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((axes, sweep.reps))
}

fn header(axes: &[Axis]) -> Vec<String> {
    let mut h = vec!["point".to_string()];
    h.extend(axes.iter().map(|a| a.name.clone()));
    h.extend(["arm", "strategy", "reps"].map(String::from));
    for m in Metric::all() {
        let base = format!("{}{}", m.name(), m.unit().csv_suffix());
        h.push(format!("{base}_mean"));
        h.push(format!("{base}_std"));
        h.push(format!("{base}_ci95"));
    }
    h
}

fn record(row: &SweepRow, reps: u32) -> Vec<String> {
    let mut r = vec![row.point.to_string()];
    r.extend(row.values.iter().cloned());
    r.push(row.arm.clone());
    r.push(row.strategy.clone());
    r.push(reps.to_string());
    for (_, s) in &row.summaries {
        r.push(format!("{}", s.mean));
        r.push(format!("{}", s.std));
        r.push(format!("{}", s.ci95));
    }
    r
}

/// Reads what an earlier run of the same sweep wrote: the number of complete leading points.
fn resume_prefix(
    path: &Path,
    expected_header: &[String],
    arms: usize,
) -> Result<(usize, Vec<Vec<String>>), SweepError> {
    let out_err = |m: String| SweepError::Output {
        path: path.to_path_buf(),
        message: m,
    };
    let mut rdr = match csv::ReaderBuilder::new().flexible(true).from_path(path) {
        Ok(r) => r,
        Err(_) => return Ok((0, Vec::new())),
    };
    let h: Vec<String> = rdr
        .headers()
        .map_err(|e| out_err(e.to_string()))?
        .iter()
        .map(str::to_string)
        .collect();
    if h != expected_header {
        return Err(out_err(
            "its columns differ from this sweep's (other axes, arms or metrics); write to another file or delete it".into(),
        ));
    }
    let mut rows = Vec::new();
    for rec in rdr.records() {
        let Ok(rec) = rec else { break };
        if rec.len() != expected_header.len() {
            break; // a torn last line
        }
        rows.push(rec.iter().map(str::to_string).collect::<Vec<_>>());
    }
    // Complete points only, in order from 0.
    let mut complete = 0;
    let mut kept = Vec::new();
    loop {
        let of_point: Vec<&Vec<String>> = rows
            .iter()
            .filter(|r| r[0] == complete.to_string())
            .collect();
        if of_point.len() != arms {
            break;
        }
        kept.extend(of_point.into_iter().cloned());
        complete += 1;
    }
    Ok((complete, kept))
}

struct Writer {
    out: csv::Writer<std::fs::File>,
    next: usize,
    pending: std::collections::BTreeMap<usize, Vec<SweepRow>>,
    reps: u32,
    written: Vec<SweepRow>,
}

impl Writer {
    fn offer(&mut self, point: usize, rows: Vec<SweepRow>) -> std::io::Result<()> {
        self.pending.insert(point, rows);
        while let Some(rows) = self.pending.remove(&self.next) {
            for row in &rows {
                self.out.write_record(record(row, self.reps))?;
            }
            self.out.flush()?;
            self.written.extend(rows);
            self.next += 1;
        }
        Ok(())
    }
}

pub fn run_sweep(loaded: &LoadedScenario, opts: &SweepOptions) -> Result<SweepResult, SweepError> {
    if opts.axes.is_empty() {
        return Err(SweepError::NoAxes);
    }
    let cases = scenario::cases(loaded)?;
    let (case_name, case_ovs) = match &opts.case {
        Some(c) => cases.iter().find(|(n, _)| n == c).cloned().ok_or_else(|| {
            ScenarioError::new(
                &loaded.path,
                format!(
                    "no case `{c}`; cases: {}",
                    cases
                        .iter()
                        .map(|c| c.0.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?,
        None => cases[0].clone(),
    };
    let base = loaded.with_overrides(&case_ovs)?;
    let grid = values::grid(&opts.axes);
    let point_overrides = |p: &[usize]| -> Result<Vec<scenario::Override>, ScenarioError> {
        opts.axes
            .iter()
            .zip(p)
            .map(|(a, &i)| {
                let text = format!("{}={}", a.name, a.values[i]);
                scenario::parse_override(&text)
                    .map_err(|e| ScenarioError::new(&loaded.path, e.to_string()))
            })
            .collect()
    };
    let tables = TableCache::default();
    // Resolve every point before running any, so a bad name or value fails at once.
    let mut resolved = Vec::with_capacity(grid.len());
    for p in &grid {
        let s = base.with_overrides(&point_overrides(p)?)?;
        let mut r = scenario::resolve(&s, &tables)?;
        if let Some(n) = opts.reps {
            r.replications = n.max(1);
        }
        resolved.push(r);
    }
    let reps = resolved.first().map(|r| r.replications).unwrap_or(1);
    let arms = resolved.first().map(|r| r.arms.len()).unwrap_or(0);

    let hdr = header(&opts.axes);

    let (done, kept) = if opts.resume {
        resume_prefix(&opts.output, &hdr, arms)?
    } else {
        (0, Vec::new())
    };
    let out_err = |e: &dyn std::fmt::Display| SweepError::Output {
        path: opts.output.clone(),
        message: e.to_string(),
    };
    if let Some(dir) = opts.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| out_err(&e))?;
    }
    let file = std::fs::File::create(&opts.output).map_err(|e| out_err(&e))?;
    let mut out = csv::Writer::from_writer(file);
    out.write_record(&hdr).map_err(|e| out_err(&e))?;
    for r in &kept {
        out.write_record(r).map_err(|e| out_err(&e))?;
    }
    out.flush().map_err(|e| out_err(&e))?;
    let writer = Mutex::new(Writer {
        out,
        next: done,
        pending: Default::default(),
        reps,
        written: Vec::new(),
    });

    let todo: Vec<usize> = (done..grid.len()).collect();
    let bar = progress_bar(opts.progress, grid.len() as u64, done as u64);
    let failure: Mutex<Option<SweepError>> = Mutex::new(None);
    todo.par_iter().for_each(|&pi| {
        if failure.lock().map(|f| f.is_some()).unwrap_or(true) {
            return;
        }
        let r = &resolved[pi];
        let jobs: Vec<(usize, u32)> = (0..r.arms.len())
            .flat_map(|a| (0..r.replications).map(move |rep| (a, rep)))
            .collect();
        let runs: Vec<Result<RunMetrics, SweepError>> = jobs
            .par_iter()
            .map(|&(a, rep)| {
                run_arm(r, a, rep, Default::default(), &Simulated)
                    .map(|x| x.total)
                    .map_err(|(q, e)| SweepError::Run {
                        point: pi,
                        what: describe_point(&opts.axes, &grid[pi]),
                        arm: format!("{} (query {q})", r.arms[a].name),
                        message: e.to_string(),
                    })
            })
            .collect();
        let mut rows = Vec::new();
        let mut by_arm: Vec<Vec<RunMetrics>> = vec![Vec::new(); r.arms.len()];
        for (&(a, _), res) in jobs.iter().zip(runs) {
            match res {
                Ok(m) => by_arm[a].push(m),
                Err(e) => {
                    if let Ok(mut f) = failure.lock() {
                        f.get_or_insert(e);
                    }
                    return;
                }
            }
        }
        for (a, runs) in by_arm.into_iter().enumerate() {
            let report = crate::report::ArmReport {
                arm: r.arms[a].name.clone(),
                strategy: r.arms[a].strategy_name.clone(),
                runs,
                per_query: Vec::new(),
            };
            rows.push(SweepRow {
                point: pi,
                values: opts
                    .axes
                    .iter()
                    .zip(&grid[pi])
                    .map(|(ax, &i)| ax.values[i].clone())
                    .collect(),
                arm: report.arm.clone(),
                strategy: report.strategy.clone(),
                summaries: report.summaries(),
            });
        }
        let res = writer
            .lock()
            .map_err(|_| ())
            .and_then(|mut w| w.offer(pi, rows).map_err(|_| ()));
        if res.is_err() {
            if let Ok(mut f) = failure.lock() {
                f.get_or_insert(SweepError::Output {
                    path: opts.output.clone(),
                    message: "cannot write a row".into(),
                });
            }
        }
        bar.inc(1);
    });
    bar.finish_and_clear();
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    let w = writer.into_inner().map_err(|_| SweepError::Output {
        path: opts.output.clone(),
        message: "a worker panicked".into(),
    })?;
    let _ = case_name;
    // Rows for plots: what was kept from before plus what this run wrote, re-read from the file
    // so resumed and fresh sweeps plot the same thing.
    let rows = read_rows(&opts.output, &opts.axes)?;
    Ok(SweepResult {
        axes: opts.axes.clone(),
        rows,
        points_run: w.next - done,
        points_resumed: done,
    })
}

fn describe_point(axes: &[Axis], p: &[usize]) -> String {
    axes.iter()
        .zip(p)
        .map(|(a, &i)| format!("{}={}", a.name, a.values[i]))
        .collect::<Vec<_>>()
        .join(", ")
}

fn read_rows(
    path: &Path,
    axes: &[Axis],
) -> Result<Vec<SweepRow>, SweepError> {
    let err = |m: String| SweepError::Output {
        path: path.to_path_buf(),
        message: m,
    };
    let mut rdr = csv::Reader::from_path(path).map_err(|e| err(e.to_string()))?;
    let mut rows = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| err(e.to_string()))?;
        let f: Vec<&str> = rec.iter().collect();
        let n_axes = axes.len();
        let point = f[0]
            .parse()
            .map_err(|_| err(format!("bad point number `{}`", f[0])))?;
        let values = f[1..1 + n_axes].iter().map(|s| s.to_string()).collect();
        let arm = f[1 + n_axes].to_string();
        let strategy = f[2 + n_axes].to_string();
        let n: usize = f[3 + n_axes].parse().unwrap_or(1);
        let mut summaries = Vec::new();
        for (mi, metric) in Metric::all().enumerate() {
            let at = 4 + n_axes + mi * 3;
            let num = |i: usize| {
                f.get(i)
                    .and_then(|s| s.parse::<f64>().ok())
                    .unwrap_or(f64::NAN)
            };
            summaries.push((
                metric,
                Summary {
                    n,
                    mean: num(at),
                    std: num(at + 1),
                    ci95: num(at + 2),
                },
            ));
        }
        rows.push(SweepRow {
            point,
            values,
            arm,
            strategy,
            summaries,
        });
    }
    Ok(rows)
}

fn progress_bar(enabled: bool, total: u64, done: u64) -> indicatif::ProgressBar {
    if !enabled {
        return indicatif::ProgressBar::hidden();
    }
    // indicatif draws nothing when stderr is not a terminal.
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} points  {per_sec}  eta {eta}")
    {
        bar.set_style(style);
    }
    bar.set_position(done);
    bar
}
