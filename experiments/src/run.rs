//! Runs of a scenario, written once for every world: every case x arm x replication x query,
//! through a [`drive::Runner`] (simulated: in parallel with rayon; real: one after another),
//! collected in a fixed order so the report does not depend on the thread count.

use crate::report::{ArmReport, CaseReport, Report, RunMetrics};
use drive::{Recording, RunError, RunFailure, Runner, Simulated, TimelineRow, TraceRow};
use rayon::prelude::*;
use scenario::{LoadedScenario, Resolved, ScenarioError, TableCache};

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub replications: Option<u32>,
    pub seed: Option<u64>,
    /// Only these cases (all when empty).
    pub cases: Vec<String>,
    /// Only these arms, by name (all when empty).
    pub arms: Vec<String>,
    pub trace: bool,
    pub timeline: bool,
    /// Replace the arms by `clickhouse-base`, base plus each redesign mechanism R1..R8 alone,
    /// and `clickhouse-redesign` (the scenario's shared `settings:` still apply).
    pub ablation: bool,
    /// Generated tables keep outlines of their files past this many column chunks
    /// (`scenario::KEEP_WHOLE_UP_TO_CHUNKS` when `None`); the runs are the same either way.
    pub keep_whole_up_to_chunks: Option<u64>,
}

/// An ablation arm's label says which of R1..R8 it runs with (`base`: none, `base+Rn`: Rn
/// alone, `redesign`: all eight); an override that changed that would run something else under
/// the label, so it is refused.
fn check_ablation_arms(case: &str, r: &Resolved) -> Result<(), ScenarioRunError> {
    for a in &r.arms {
        let wanted: Vec<bool> = (1..=8)
            .map(|n| match a.name.as_str() {
                "base" => false,
                "redesign" => true,
                name => name == format!("base+R{n}"),
            })
            .collect();
        let ran: Vec<bool> = (1..=8).map(|n| a.strategy.mechanism(n)).collect();
        if ran != wanted {
            let on: Vec<String> = (1..=8)
                .filter(|&n| a.strategy.mechanism(n))
                .map(|n| format!("R{n}"))
                .collect();
            let state = if on.is_empty() {
                "with none of R1..R8".to_string()
            } else {
                format!("with {} of R1..R8 on", on.join(", "))
            };
            return Err(ScenarioRunError::AblationUndone {
                case: case.to_string(),
                arm: a.name.clone(),
                state,
            });
        }
    }
    Ok(())
}

/// The ablation arms: `clickhouse-base`, base with each of R1..R8 switched on alone, and
/// `clickhouse-redesign` (R9 and R10 were designed, not measured), as a scenario's `arms:`.
pub fn ablation_arms() -> serde_json::Value {
    let mut arms = vec![serde_json::json!({ "name": "base", "strategy": "clickhouse-base" })];
    for (i, m) in planner::R_NAMES[..8].iter().enumerate() {
        arms.push(serde_json::json!({
            "name": format!("base+R{}", i + 1),
            "strategy": "clickhouse-base",
            "settings": { *m: "true" },
        }));
    }
    arms.push(serde_json::json!({ "name": "redesign", "strategy": "clickhouse-redesign" }));
    serde_json::Value::Array(arms)
}

#[derive(Debug, thiserror::Error)]
pub enum ScenarioRunError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    // The run's error is part of the message and deliberately not a `source` (a field of that
    // name would be one): an error chain printed with its causes would say it twice.
    #[error("case {case}, arm {arm}, replication {replication}, query {query}: {error}")]
    Run {
        case: String,
        arm: String,
        replication: u32,
        query: String,
        error: Box<RunError>,
    },
    #[error("case {case}: {error}")]
    Case { case: String, error: RunError },
    #[error("no case is called {0}; the scenario has: {1}")]
    NoSuchCase(String, String),
    #[error("no arm is called {0}; the scenario has: {1}")]
    NoSuchArm(String, String),
    #[error("{0} replications asked for: give between 1 and {max} (limits::MAX_REPLICATIONS)", max = limits::MAX_REPLICATIONS)]
    TooManyReplications(u32),
    #[error(
        "--ablation: case {case}: arm {arm} would run {state} (an override sets the mechanisms \
         the ablation sets itself): drop the override of r1..r8, or run without --ablation"
    )]
    AblationUndone {
        case: String,
        arm: String,
        state: String,
    },
    #[error("writing CSV: {0}")]
    Csv(#[from] csv::Error),
}

pub struct ScenarioOutput {
    pub report: Report,
    /// How the overrides landed (not-honouring arms, shadowed values): for stderr.
    pub notes: Vec<String>,
    pub trace_csv: String,
    pub trace_rows: usize,
    pub timeline_csv: String,
    /// (case, arm, replication, query, rows) of every run, when timelines were asked for.
    pub timelines: Vec<Labelled<TimelineRow>>,
}

pub type Labelled<T> = (String, String, u32, String, Vec<T>);

/// A scenario run that stopped on an error, with the request trace of what had completed: every
/// earlier run's, and the failed run's requests that ended before it failed (empty unless the
/// trace was asked for).
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct Stopped {
    pub error: ScenarioRunError,
    /// The trace CSV of the completed requests, as [`ScenarioOutput::trace_csv`].
    pub trace_csv: String,
    /// Requests in it.
    pub trace_rows: usize,
}

impl From<ScenarioRunError> for Box<Stopped> {
    fn from(error: ScenarioRunError) -> Self {
        Box::new(Stopped {
            error,
            trace_csv: String::new(),
            trace_rows: 0,
        })
    }
}

impl From<ScenarioError> for Box<Stopped> {
    fn from(error: ScenarioError) -> Self {
        ScenarioRunError::from(error).into()
    }
}

/// A trace or timeline file that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("writing the {what} to {}", path.display())]
pub struct OutputFileError {
    pub what: &'static str,
    pub path: std::path::PathBuf,
    pub source: std::io::Error,
}

impl ScenarioOutput {
    /// Writes the trace and the timeline CSV where asked (`sim run` and `sim measure` alike),
    /// saying so on stderr.
    pub fn write_csv_files(
        &self,
        trace: Option<&std::path::Path>,
        timeline: Option<&std::path::Path>,
    ) -> Result<(), OutputFileError> {
        for (what, path, text) in [
            ("trace", trace, &self.trace_csv),
            ("timeline", timeline, &self.timeline_csv),
        ] {
            let Some(path) = path else { continue };
            std::fs::write(path, text).map_err(|source| OutputFileError {
                what,
                path: path.to_path_buf(),
                source,
            })?;
            if what == "trace" {
                eprintln!("trace: {} ({} requests)", path.display(), self.trace_rows);
            } else {
                eprintln!("timeline: {}", path.display());
            }
        }
        Ok(())
    }
}

/// Runs the scenario's cases (or the selected ones) in the simulated world.
pub fn run_scenario(
    loaded: &LoadedScenario,
    opts: &RunOptions,
) -> Result<ScenarioOutput, ScenarioRunError> {
    run_scenario_with(loaded, opts, &Simulated)
}

/// Runs the scenario's cases (or the selected ones) through `runner`. Every case is resolved
/// and opened (the runner refuses what its world cannot honour) before the first run.
pub fn run_scenario_with(
    loaded: &LoadedScenario,
    opts: &RunOptions,
    runner: &dyn Runner,
) -> Result<ScenarioOutput, ScenarioRunError> {
    run_scenario_keeping_trace(loaded, opts, runner).map_err(|s| s.error)
}

/// As [`run_scenario_with`], and a run that fails keeps the trace of what had completed
/// ([`Stopped`]), for a caller that writes it anyway (`sim measure`).
pub fn run_scenario_keeping_trace(
    loaded: &LoadedScenario,
    opts: &RunOptions,
    runner: &dyn Runner,
) -> Result<ScenarioOutput, Box<Stopped>> {
    let tables = TableCache::keeping_whole_up_to(
        opts.keep_whole_up_to_chunks
            .unwrap_or(scenario::KEEP_WHOLE_UP_TO_CHUNKS),
    );
    let ablated;
    let loaded = if opts.ablation {
        ablated = loaded.with_arms(ablation_arms())?;
        &ablated
    } else {
        loaded
    };
    let all_cases = scenario::cases(loaded)?;
    let mut notes = loaded.notes.clone();
    for wanted in &opts.cases {
        if !all_cases.iter().any(|(n, _)| n == wanted) {
            let names: Vec<&str> = all_cases.iter().map(|(n, _)| n.as_str()).collect();
            return Err(ScenarioRunError::NoSuchCase(wanted.clone(), names.join(", ")).into());
        }
    }
    let mut resolved_cases = Vec::new();
    for (name, mut ovs) in all_cases {
        if !opts.cases.is_empty() && !opts.cases.contains(&name) {
            continue;
        }
        if let Some(seed) = opts.seed {
            // Before resolving, as `--set seed=S`: the seed draws the generated table and the
            // query's pruning as well as the runs' streams.
            ovs.push(scenario::Override {
                path: vec!["seed".into()],
                setting: None,
                value: seed.into(),
                text: format!("--seed {seed}"),
                layer: scenario::Layer::CommandLine,
            });
        }
        let s = loaded.with_overrides(&ovs)?;
        for n in &s.notes {
            if !notes.contains(n) {
                notes.push(format!("case {name}: {n}"));
            }
        }
        let mut r = scenario::resolve(&s, &tables).map_err(|e| e.in_case(&name))?;
        if opts.ablation {
            check_ablation_arms(&name, &r)?;
        }
        for n in &r.notes {
            let n = format!("case {name}: {n}");
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
        for a in &r.arms {
            for n in a.inert_settings() {
                let n = format!("case {name}: {n}");
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
        }
        for wanted in &opts.arms {
            if !r.arms.iter().any(|a| &a.name == wanted) {
                let names: Vec<&str> = r.arms.iter().map(|a| a.name.as_str()).collect();
                return Err(ScenarioRunError::NoSuchArm(wanted.clone(), names.join(", ")).into());
            }
        }
        if !opts.arms.is_empty() {
            r.arms.retain(|a| opts.arms.contains(&a.name));
        }
        if let Some(n) = opts.replications {
            // Checked here as well as by each command: a caller of this library may skip it.
            if n > limits::MAX_REPLICATIONS {
                return Err(ScenarioRunError::TooManyReplications(n).into());
            }
            r.replications = n.max(1);
        }
        resolved_cases.push((name, r));
    }
    let rec = Recording {
        trace: opts.trace,
        timeline: opts.timeline,
    };
    let mut traces: Vec<Labelled<TraceRow>> = Vec::new();
    let mut timelines: Vec<Labelled<TimelineRow>> = Vec::new();
    let mut cases = Vec::new();
    let case_error = |name: &str| {
        let case = name.to_string();
        move |error| ScenarioRunError::Case { case, error }
    };
    // Every refusal before the first run, so that a refusal costs nothing.
    for (name, r) in &resolved_cases {
        runner.check_case(r).map_err(case_error(name))?;
    }
    for (name, r) in &resolved_cases {
        let done = runner
            .open_case(r)
            .map_err(|e| Box::new((case_error(name)(e), Vec::new())))
            .and_then(|()| run_case(name, r, rec, runner));
        let (case, tr, tl) = match done {
            Ok(done) => done,
            Err(failure) => {
                let (error, completed) = *failure;
                traces.extend(completed);
                return Err(stopped(error, &traces, &resolved_cases, opts.trace));
            }
        };
        cases.push(case);
        traces.extend(tr);
        timelines.extend(tl);
    }
    let trace_rows = request_rows(&traces);
    Ok(ScenarioOutput {
        notes,
        report: Report {
            scenario: loaded.file.name.clone(),
            cases,
        },
        trace_csv: if opts.trace {
            drive::trace::to_csv(&traces, &run_metas(&resolved_cases, &traces))
                .map_err(ScenarioRunError::from)?
        } else {
            String::new()
        },
        trace_rows,
        timeline_csv: if opts.timeline {
            drive::timeline::to_csv(&timelines).map_err(ScenarioRunError::from)?
        } else {
            String::new()
        },
        timelines,
    })
}

/// Requests in traces (the needed-range rows are not requests).
fn request_rows(traces: &[Labelled<TraceRow>]) -> usize {
    traces
        .iter()
        .flat_map(|t| t.4.iter())
        .filter(|row| !matches!(row.served_by, drive::trace::ServedBy::Needed(_)))
        .count()
}

/// The stop on `error`, with the trace of the runs in `traces` (when traced).
fn stopped(
    error: ScenarioRunError,
    traces: &[Labelled<TraceRow>],
    cases: &[(String, Resolved)],
    traced: bool,
) -> Box<Stopped> {
    if !traced {
        return error.into();
    }
    match drive::trace::to_csv(traces, &run_metas(cases, traces)) {
        Ok(trace_csv) => Box::new(Stopped {
            error,
            trace_csv,
            trace_rows: request_rows(traces),
        }),
        // Writing to memory does not fail; if it did, the run's own error is the one to say.
        Err(_) => error.into(),
    }
}

/// What each traced run ran with, in the order of its rows.
fn run_metas(
    cases: &[(String, Resolved)],
    traces: &[Labelled<TraceRow>],
) -> Vec<tracefit::RunMeta> {
    traces
        .iter()
        .filter_map(|(case, arm, rep, query, _)| {
            let (_, r) = cases.iter().find(|(n, _)| n == case)?;
            let a = r.arms.iter().find(|a| &a.name == arm)?;
            Some(tracefit::RunMeta {
                case: case.clone(),
                arm: arm.clone(),
                replication: *rep,
                query: query.clone(),
                strategy: a.strategy_name.clone(),
                seed: r.seed,
                store: r.store.name.clone(),
                settings: a
                    .changed_settings()
                    .into_iter()
                    .filter_map(|s| {
                        s.split_once(" = ")
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                    })
                    .collect(),
            })
        })
        .collect()
}

/// One arm x replication: every query in order, metrics added up.
pub struct ArmRun {
    pub total: RunMetrics,
    pub per_query: Vec<(String, RunMetrics)>,
    pub traces: Vec<(String, Vec<TraceRow>)>,
    pub timelines: Vec<(String, Vec<TimelineRow>)>,
}

/// A query of an arm that failed, and the traces of the queries before it and of the failed
/// query's completed requests (empty unless traced).
#[derive(Debug)]
pub struct ArmFailure {
    pub query: String,
    pub error: RunError,
    pub traces: Vec<(String, Vec<TraceRow>)>,
}

pub fn run_arm(
    r: &Resolved,
    arm_index: usize,
    replication: u32,
    rec: Recording,
    runner: &dyn Runner,
) -> Result<ArmRun, ArmFailure> {
    let arm = &r.arms[arm_index];
    let mut total = RunMetrics::default();
    let mut per_query = Vec::new();
    let mut traces = Vec::new();
    let mut timelines = Vec::new();
    for (qi, q) in r.queries.iter().enumerate() {
        let out = match runner.run(r, arm, qi, q, replication, rec) {
            Ok(out) => out,
            Err(RunFailure { error, trace }) => {
                if rec.trace {
                    traces.push((q.name.clone(), trace));
                }
                return Err(ArmFailure {
                    query: q.name.clone(),
                    error,
                    traces,
                });
            }
        };
        total.accumulate(&out.metrics);
        if r.queries.len() > 1 {
            per_query.push((q.name.clone(), out.metrics));
        }
        if rec.trace {
            traces.push((q.name.clone(), out.trace));
        }
        if rec.timeline {
            timelines.push((q.name.clone(), out.timeline));
        }
    }
    Ok(ArmRun {
        total,
        per_query,
        traces,
        timelines,
    })
}

/// One case's report with its trace and timeline rows.
type CaseOutput = (
    CaseReport,
    Vec<Labelled<TraceRow>>,
    Vec<Labelled<TimelineRow>>,
);

/// A case that failed, with the traces of what had completed.
type CaseFailure = Box<(ScenarioRunError, Vec<Labelled<TraceRow>>)>;

fn run_case(
    name: &str,
    r: &Resolved,
    rec: Recording,
    runner: &dyn Runner,
) -> Result<CaseOutput, CaseFailure> {
    let jobs: Vec<(usize, u32)> = (0..r.arms.len())
        .flat_map(|a| (0..r.replications).map(move |rep| (a, rep)))
        .collect();
    let one = |&(a, rep): &(usize, u32)| run_arm(r, a, rep, rec, runner);
    let results: Vec<Result<ArmRun, ArmFailure>> = if runner.parallel() {
        jobs.par_iter().map(one).collect()
    } else {
        jobs.iter().map(one).collect()
    };
    let mut arms: Vec<ArmReport> = r
        .arms
        .iter()
        .map(|a| ArmReport {
            arm: a.name.clone(),
            strategy: a.strategy_name.clone(),
            settings: a.changed_settings(),
            runs: Vec::new(),
            per_query: Vec::new(),
        })
        .collect();
    let mut traces = Vec::new();
    let mut timelines = Vec::new();
    let label = |a: usize, rep: u32, q: String, t: Vec<TraceRow>| {
        (name.to_string(), r.arms[a].name.clone(), rep, q, t)
    };
    let mut failure = None;
    for (&(a, rep), res) in jobs.iter().zip(results) {
        let run = match res {
            Ok(run) => run,
            Err(f) => {
                // The first failure is the one said; every run's completed requests are kept.
                traces.extend(f.traces.into_iter().map(|(q, t)| label(a, rep, q, t)));
                failure.get_or_insert(ScenarioRunError::Run {
                    case: name.to_string(),
                    arm: r.arms[a].name.clone(),
                    replication: rep,
                    query: f.query,
                    error: Box::new(f.error),
                });
                continue;
            }
        };
        if rep == 0 {
            arms[a].per_query = run.per_query;
        }
        arms[a].runs.push(run.total);
        for (q, t) in run.traces {
            traces.push(label(a, rep, q, t));
        }
        for (q, t) in run.timelines {
            timelines.push((name.to_string(), r.arms[a].name.clone(), rep, q, t));
        }
    }
    if let Some(error) = failure {
        return Err(Box::new((error, traces)));
    }
    Ok((
        CaseReport {
            case: name.to_string(),
            seed: r.seed,
            replications: r.replications,
            arms,
        },
        traces,
        timelines,
    ))
}
