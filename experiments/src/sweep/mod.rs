//! `sim sweep`: every point of a grid over settings or model parameters, every arm, with
//! replications on common random numbers (the same seeds at every point), in parallel.
//!
//! Rows are written in point order as soon as the points before them are done, and flushed, so
//! an interrupted sweep leaves a prefix of complete points. The file's first line is a comment
//! with the sweep's [`Fingerprint`] (everything that decides its rows); `--resume` keeps the
//! complete prefix of a file with the same fingerprint and runs the rest, and refuses a file
//! whose fingerprint differs, naming what differs. Because the order is fixed, the CSV does
//! not depend on the thread count. An axis column holds the value each arm actually ran with:
//! `-` for an arm that does not honour the axis's setting.

mod fingerprint;
mod memo;
pub mod merge;
mod output;
pub mod shard;
pub mod values;

use crate::report::{Metric, RunMetrics, Summary};
use crate::run::run_arm;
use drive::Simulated;
use memo::RunMemo;
use rayon::prelude::*;
use scenario::{Layer, LoadedScenario, Resolved, ScenarioError, TableCache};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

pub use fingerprint::Fingerprint;
pub use shard::{Shard, ShardLine};
pub use values::{parse_vary, Axis, Kind, VaryError};

/// The most points a sweep may have (all axes together) and the most replications per point,
/// named in `limits` (docs/bounds.md): 10^6 points of 0.1 s are a day of one core.
pub use limits::{MAX_GRID_POINTS, MAX_REPLICATIONS};

/// Points of the running sweep complete on disk, for a Ctrl-C message.
pub static POINTS_ON_DISK: AtomicUsize = AtomicUsize::new(0);

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
    #[error("sim sweep merge: {0}")]
    Merge(String),
    #[error("nothing to vary: give `--vary NAME=VALUES` or a `sweep:` section in the scenario")]
    NoAxes,
    #[error("`{0}` is varied twice; give each axis once (list all its values in one `--vary`)")]
    RepeatedAxis(String),
    #[error("the grid has {points} points ({axes}); at most {max}")]
    TooManyPoints {
        points: String,
        axes: String,
        max: usize,
    },
    #[error("--reps {0}: give between 1 and {max} replications", max = MAX_REPLICATIONS)]
    Reps(u32),
    #[error("axis `{axis}` value `{value}`: {why}; expected {expected}")]
    Value {
        axis: String,
        value: String,
        why: String,
        expected: String,
    },
}

#[derive(Debug, Clone)]
pub struct SweepOptions {
    pub axes: Vec<Axis>,
    pub reps: Option<u32>,
    pub output: PathBuf,
    pub resume: bool,
    /// Which case of the scenario to sweep (the first when None).
    pub case: Option<String>,
    /// Run only this shard's points (the whole grid when None).
    pub shard: Option<Shard>,
    pub progress: bool,
}

/// One (point, arm) result.
#[derive(Debug, Clone)]
pub struct SweepRow {
    pub point: usize,
    /// The point's position on each axis.
    pub coords: Vec<usize>,
    /// Per axis, the value this arm ran with (`-`: the arm does not honour the setting).
    pub values: Vec<String>,
    pub arm: String,
    pub strategy: String,
    pub summaries: Vec<(Metric, Summary)>,
}

pub struct SweepResult {
    pub axes: Vec<Axis>,
    /// The case swept.
    pub case: String,
    pub rows: Vec<SweepRow>,
    pub points_run: usize,
    pub points_resumed: usize,
    /// Points of the file when complete (the grid's, or the shard's).
    pub points_in_file: usize,
    /// How the overrides landed (not-honouring arms, shadowed values): for stderr.
    pub notes: Vec<String>,
}

/// The axes of a sweep: `--vary` arguments, else the scenario's `sweep:` section. An axis
/// named twice is refused; values of a setting are checked against its type here, once.
pub fn axes_for(
    loaded: &LoadedScenario,
    vary: &[String],
) -> Result<(Vec<Axis>, Option<u32>), SweepError> {
    let (axes, reps) = if !vary.is_empty() {
        let axes = vary
            .iter()
            .map(|v| parse_vary(v))
            .collect::<Result<Vec<_>, _>>()?;
        (axes, None)
    } else {
        let Some(sweep) = &loaded.file.sweep else {
            return Err(SweepError::NoAxes);
        };
        let axes = sweep
            .vary
            .iter()
            .map(|(k, v)| values::parse_values(k, v, &format!("{k}={v}")))
            .collect::<Result<Vec<_>, _>>()?;
        (axes, sweep.reps)
    };
    check_axes(&axes)?;
    Ok((axes, reps))
}

fn check_axes(axes: &[Axis]) -> Result<(), SweepError> {
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.name == a.name) {
            return Err(SweepError::RepeatedAxis(a.name.clone()));
        }
        if let Some(setting) = setting_of(&a.name) {
            for v in &a.values {
                setting.kind.parse(v).map_err(|e| SweepError::Value {
                    axis: a.name.clone(),
                    value: v.clone(),
                    why: e.why,
                    expected: e.expected,
                })?;
            }
        }
    }
    let mut points: usize = 1;
    for a in axes {
        points = points
            .checked_mul(a.values.len())
            .filter(|p| *p <= MAX_GRID_POINTS)
            .ok_or_else(|| SweepError::TooManyPoints {
                points: axes
                    .iter()
                    .map(|a| a.values.len().to_string())
                    .collect::<Vec<_>>()
                    .join(" x "),
                axes: axes
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                max: MAX_GRID_POINTS,
            })?;
    }
    Ok(())
}

/// The setting an axis varies: a bare setting name, or the last segment of
/// `arms.NAME.settings.SETTING`.
fn setting_of(axis: &str) -> Option<&'static planner::settings::Setting> {
    let last = axis.rsplit('.').next()?;
    let bare = !axis.contains('.');
    let arm_setting = axis.starts_with("arms.") && axis.split('.').nth(2) == Some("settings");
    (bare || arm_setting)
        .then(|| planner::settings::setting(last))
        .flatten()
}

/// The value `arm` ran with on `axis` at a point whose override text is `text`.
fn effective_value(axis: &str, text: &str, r: &Resolved, arm: usize) -> String {
    let Some(a) = r.arms.get(arm) else {
        return "-".into();
    };
    let Some(setting) = setting_of(axis) else {
        // A scenario path (store, table, caches...): the same for every arm.
        return text.to_string();
    };
    if axis.starts_with("arms.") {
        let target = axis.split('.').nth(1).unwrap_or("");
        let targeted = target == a.name || target.parse::<usize>().ok() == Some(arm);
        if !targeted {
            return "-".into();
        }
    }
    // A setting that does nothing on this arm (not honoured, or its mechanism off) did not
    // run: the column says so rather than show a value that had no effect.
    if !setting.applies_to(&a.strategy) {
        return "-".into();
    }
    a.strategy
        .value(setting.name)
        .map_or_else(|| "-".into(), |v| v.text())
}

fn point_overrides(
    loaded: &LoadedScenario,
    axes: &[Axis],
    p: &[usize],
) -> Result<Vec<scenario::Override>, ScenarioError> {
    axes.iter()
        .zip(p)
        .map(|(a, &i)| {
            let text = format!("{}={}", a.name, a.values[i]);
            scenario::parse_override(&text)
                .map(|o| o.at(Layer::Point))
                .map_err(|e| ScenarioError::new(&loaded.path, e.to_string()))
        })
        .collect()
}

fn describe_point(axes: &[Axis], p: &[usize]) -> String {
    axes.iter()
        .zip(p)
        .map(|(a, &i)| format!("{}={}", a.name, a.values[i]))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The case to sweep and its overrides.
fn pick_case(
    loaded: &LoadedScenario,
    wanted: Option<&str>,
) -> Result<(String, Vec<scenario::Override>), SweepError> {
    let cases = scenario::cases(loaded)?;
    match wanted {
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
            .into()
        }),
        None => cases
            .into_iter()
            .next()
            .ok_or_else(|| ScenarioError::new(&loaded.path, "the scenario has no case").into()),
    }
}

pub fn run_sweep(loaded: &LoadedScenario, opts: &SweepOptions) -> Result<SweepResult, SweepError> {
    if opts.axes.is_empty() {
        return Err(SweepError::NoAxes);
    }
    check_axes(&opts.axes)?;
    if let Some(n) = opts.reps {
        if n == 0 || n > MAX_REPLICATIONS {
            return Err(SweepError::Reps(n));
        }
    }
    let (case_name, case_ovs) = pick_case(loaded, opts.case.as_deref())?;
    let base = loaded.with_overrides(&case_ovs)?;
    let grid = values::grid(&opts.axes);
    let tables = TableCache::default();
    let resolve_point = |p: &[usize]| -> Result<(Resolved, Vec<String>), SweepError> {
        let s = base.with_overrides(&point_overrides(loaded, &opts.axes, p)?)?;
        let mut r = scenario::resolve(&s, &tables)?;
        if let Some(n) = opts.reps {
            r.replications = n;
        }
        let mut notes = s.notes;
        notes.extend(r.notes.iter().cloned());
        for a in &r.arms {
            notes.extend(a.inert_settings());
        }
        Ok((r, notes))
    };
    // The first point alone, to fail fast on a bad name and to learn the arms; the others
    // resolve inside their own jobs, in parallel.
    let (first, mut notes) = resolve_point(&grid[0])?;
    let reps = first.replications;
    let arms = first.arms.len();
    let fingerprint = Fingerprint::of(&base, &case_name, &opts.axes, reps, first.seed)?;
    let hdr = output::header(&opts.axes);
    let order = match opts.shard {
        Some(s) => s.points(grid.len()),
        None => (0..grid.len()).collect(),
    };
    let points_in_file = order.len();
    let (done, mut writer) = output::open(output::Target {
        path: &opts.output,
        fingerprint: &fingerprint,
        shard: opts.shard.map(|shard| ShardLine {
            shard,
            points: grid.len(),
            arms,
        }),
        hdr: &hdr,
        arms,
        order: order.clone(),
        resume: opts.resume,
    })?;
    POINTS_ON_DISK.store(done, Ordering::Relaxed);

    let writer_lock = Mutex::new(&mut writer);
    let todo: Vec<usize> = order.get(done..).unwrap_or_default().to_vec();
    let bar = progress_bar(opts.progress, points_in_file as u64, done as u64);
    let failure: Mutex<Option<SweepError>> = Mutex::new(None);
    let point_notes: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let memo = RunMemo::new(&opts.axes);
    todo.par_iter().for_each(|&pi| {
        if failure.lock().map(|f| f.is_some()).unwrap_or(true) {
            return;
        }
        let result = run_point(pi, &grid[pi], &opts.axes, &memo, |p| {
            if pi == 0 {
                Ok((first.clone(), Vec::new()))
            } else {
                resolve_point(p)
            }
        });
        let rows = match result {
            Ok((rows, n)) => {
                if let Ok(mut all) = point_notes.lock() {
                    all.extend(n);
                }
                rows
            }
            Err(e) => {
                if let Ok(mut f) = failure.lock() {
                    f.get_or_insert(e);
                }
                return;
            }
        };
        let written = writer_lock
            .lock()
            .map_err(|_| "a worker panicked".to_string())
            .and_then(|mut w| w.offer(pi, rows, reps).map_err(|e| e.to_string()));
        match written {
            Ok(on_disk) => POINTS_ON_DISK.store(on_disk, Ordering::Relaxed),
            Err(message) => {
                if let Ok(mut f) = failure.lock() {
                    f.get_or_insert(SweepError::Output {
                        path: opts.output.clone(),
                        message,
                    });
                }
            }
        }
        bar.inc(1);
    });
    bar.finish_and_clear();
    if let Some(e) = failure.into_inner().ok().flatten() {
        return Err(e);
    }
    // This run's own count: `POINTS_ON_DISK` is for the Ctrl-C message and is shared by every
    // sweep in the process.
    let on_disk = writer_lock
        .into_inner()
        .map_or(done, |w| w.points_on_disk());
    for n in point_notes.into_inner().unwrap_or_default() {
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    // Rows for plots: what was kept from before plus what this run wrote, re-read from the file
    // so resumed and fresh sweeps plot the same thing.
    let rows = output::read_rows(&opts.output, &opts.axes, &grid)?;
    Ok(SweepResult {
        axes: opts.axes.clone(),
        case: case_name,
        rows,
        points_run: on_disk.saturating_sub(done),
        points_resumed: done,
        points_in_file,
        notes,
    })
}

/// Runs every arm and replication of one point (or takes an equal run from `memo`); its rows
/// in arm order.
fn run_point(
    pi: usize,
    coords: &[usize],
    axes: &[Axis],
    memo: &RunMemo,
    resolve: impl Fn(&[usize]) -> Result<(Resolved, Vec<String>), SweepError>,
) -> Result<(Vec<SweepRow>, Vec<String>), SweepError> {
    let (r, notes) = resolve(coords)?;
    let jobs: Vec<(usize, u32)> = (0..r.arms.len())
        .flat_map(|a| (0..r.replications).map(move |rep| (a, rep)))
        .collect();
    // A job whose key an earlier job of this point shares does not run: it takes that job's
    // run from `memo` once the point's jobs are done.
    let keys: Vec<Option<memo::Key>> = jobs
        .iter()
        .map(|&(a, rep)| memo.key(&r, a, rep, axes))
        .collect();
    let first_of_key = |i: usize| {
        keys[i]
            .as_ref()
            .is_none_or(|k| !keys[..i].iter().any(|e| e.as_ref() == Some(k)))
    };
    let ran: Vec<Result<Option<RunMetrics>, SweepError>> = jobs
        .par_iter()
        .enumerate()
        .map(|(i, &(a, rep))| {
            let key = keys[i].as_ref();
            if let Some(m) = key.and_then(|k| memo.get(k)) {
                return Ok(Some(m));
            }
            if !first_of_key(i) {
                return Ok(None);
            }
            let total = run_arm(&r, a, rep, Default::default(), &Simulated)
                .map(|x| x.total)
                .map_err(|f| SweepError::Run {
                    point: pi,
                    what: describe_point(axes, coords),
                    arm: format!("{} (query {})", r.arms[a].name, f.query),
                    message: f.error.to_string(),
                })?;
            if let Some(k) = key {
                memo.put(k.clone(), &total);
            }
            Ok(Some(total))
        })
        .collect();
    let runs: Vec<Result<RunMetrics, SweepError>> = ran
        .into_iter()
        .zip(&keys)
        .zip(&jobs)
        .map(|((res, key), &(a, _))| {
            let m = res?.or_else(|| key.as_ref().and_then(|k| memo.get(k)));
            // Unreachable unless the equal job before it failed, whose error comes first.
            m.ok_or_else(|| SweepError::Run {
                point: pi,
                what: describe_point(axes, coords),
                arm: r.arms[a].name.clone(),
                message: "an equal arm's run, to be reused, did not finish".into(),
            })
        })
        .collect();
    let mut by_arm: Vec<Vec<RunMetrics>> = vec![Vec::new(); r.arms.len()];
    for (&(a, _), res) in jobs.iter().zip(runs) {
        by_arm[a].push(res?);
    }
    let rows = by_arm
        .into_iter()
        .enumerate()
        .map(|(a, runs)| {
            let report = crate::report::ArmReport {
                arm: r.arms[a].name.clone(),
                strategy: r.arms[a].strategy_name.clone(),
                settings: Vec::new(),
                runs,
                per_query: Vec::new(),
            };
            SweepRow {
                point: pi,
                coords: coords.to_vec(),
                values: axes
                    .iter()
                    .zip(coords)
                    .map(|(ax, &i)| effective_value(&ax.name, &ax.values[i], &r, a))
                    .collect(),
                arm: report.arm.clone(),
                strategy: report.strategy.clone(),
                summaries: report.summaries(),
            }
        })
        .collect();
    Ok((rows, notes))
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
