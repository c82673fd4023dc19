//! `sim tune`: the settings that minimise wall time (or cost, or a mix) of one arm over one or
//! more scenarios, under an optional memory cap.
//!
//! Search, in the unit cube of the parameters (log-scaled where asked): scans along each axis from
//! the centre, a few space-filling points (a Halton sequence shifted by the seed), then
//! Nelder-Mead (argmin) from the best point, restarted with a smaller simplex while the budget
//! lasts. Every candidate runs on the same seeds (common
//! random numbers), values are rounded to what one would type, and a candidate that rounds to
//! settings already evaluated costs nothing. Several scenarios are combined by the geometric mean
//! of each one's objective relative to the defaults, so that no query dominates.

pub mod params;
pub mod report;

use crate::report::{Metric, RunMetrics};
use crate::run::run_arm;
use argmin::core::{CostFunction, Executor};
use argmin::solver::neldermead::NelderMead;
use drive::Simulated;
pub use params::{parse_param, Param, ParamError};
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;
use scenario::{Layer, LoadedScenario, Resolved, ScenarioError, TableCache};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error("{0}")]
    Run(String),
    #[error("--objective `{0}`: expected `time`, `cost` or `mix:W` (W = weight of time, 0..1)")]
    Objective(String),
    #[error("nothing to tune: give at least one `--param NAME=LOW..HIGH[:log]`")]
    NoParams,
    #[error("no arm called `{0}` in {1}; arms: {2}")]
    NoArm(String, String, String),
    #[error("`--param {0}` is given twice; give each setting once")]
    RepeatedParam(String),
    #[error(
        "--budget {0}: give between 1 and {max} evaluations (limits::MAX_TUNE_BUDGET)",
        max = limits::MAX_TUNE_BUDGET
    )]
    Budget(usize),
    #[error("--reps {0}: give between 1 and {max} replications", max = crate::sweep::MAX_REPLICATIONS)]
    Reps(u32),
    #[error("the tuned arm `{arm}` is {strategy}, which does not honour `{param}`; it honours: {honoured}")]
    NotHonoured {
        arm: String,
        strategy: String,
        param: String,
        honoured: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Objective {
    Time,
    Cost,
    /// weight of time; 1 - weight of cost.
    Mix(f64),
}

impl std::str::FromStr for Objective {
    type Err = TuneError;
    fn from_str(s: &str) -> Result<Self, TuneError> {
        match s {
            "time" => Ok(Objective::Time),
            "cost" => Ok(Objective::Cost),
            _ => match s.strip_prefix("mix:").and_then(|w| w.parse::<f64>().ok()) {
                Some(w) if (0.0..=1.0).contains(&w) => Ok(Objective::Mix(w)),
                _ => Err(TuneError::Objective(s.to_string())),
            },
        }
    }
}

#[derive(Debug, Clone)]
pub struct TuneOptions {
    pub params: Vec<Param>,
    pub objective: Objective,
    pub max_memory_bytes: Option<u64>,
    /// Distinct settings evaluated at most.
    pub budget: usize,
    pub seed: u64,
    /// The arm whose settings are tuned (default: the first `clickhouse-redesign` arm, else the first).
    pub arm: Option<String>,
    pub reps: Option<u32>,
    pub progress: bool,
}

/// What one scenario measured for one candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    pub wall_ns: f64,
    pub cost_usd: f64,
    pub peak_memory_bytes: f64,
}

#[derive(Debug, Clone)]
pub struct Evaluation {
    /// (setting, value as text) in parameter order.
    pub settings: Vec<(String, String)>,
    pub measured: Vec<Measured>,
    pub objective: f64,
    pub feasible: bool,
}

/// One scenario the tuner optimises over: a case of a scenario file and the arm to tune.
pub struct Target {
    pub label: String,
    pub scenario: LoadedScenario,
    pub arm_name: String,
}

impl Target {
    /// The tuned arm's strategy preset.
    pub fn strategy_name(&self) -> String {
        self.scenario
            .file
            .arms
            .iter()
            .find(|a| a.name == self.arm_name)
            .map(|a| a.strategy.clone())
            .unwrap_or_default()
    }
}

pub fn targets(loaded: &[LoadedScenario], arm: Option<&str>) -> Result<Vec<Target>, TuneError> {
    let mut out = Vec::new();
    for l in loaded {
        let arm_name = match arm {
            Some(a) => {
                if !l.file.arms.iter().any(|x| x.name == a) {
                    let names: Vec<&str> = l.file.arms.iter().map(|x| x.name.as_str()).collect();
                    return Err(TuneError::NoArm(
                        a.into(),
                        l.path.display().to_string(),
                        names.join(", "),
                    ));
                }
                a.to_string()
            }
            None => l
                .file
                .arms
                .iter()
                .find(|x| x.strategy == "clickhouse-redesign")
                .or(l.file.arms.first())
                .map(|x| x.name.clone())
                .ok_or_else(|| {
                    TuneError::NoArm("(any)".into(), l.path.display().to_string(), String::new())
                })?,
        };
        for (case, ovs) in scenario::cases(l)? {
            let s = l.with_overrides(&ovs)?;
            let label = if l.file.cases.is_empty() {
                l.file.name.clone()
            } else {
                format!("{}/{case}", l.file.name)
            };
            out.push(Target {
                label,
                scenario: s,
                arm_name: arm_name.clone(),
            });
        }
    }
    Ok(out)
}

/// Runs the chosen arm of every target with these setting overrides; replications averaged.
pub struct Evaluator<'a> {
    targets: &'a [Target],
    tables: TableCache,
    reps: Option<u32>,
    /// Applied to every resolved scenario before running (the robustness view scales the store).
    pub adjust: Option<Adjust<'a>>,
    /// Settings an evaluation set that did nothing on the arm they were set on, with why:
    /// a tuned or evaluated value that did not apply must be said, not look as if it ran.
    inert: Mutex<BTreeSet<String>>,
}

/// A change made to every resolved scenario before it runs.
pub type Adjust<'a> = Box<dyn Fn(&mut Resolved) + Send + Sync + 'a>;

impl<'a> Evaluator<'a> {
    pub fn new(targets: &'a [Target], reps: Option<u32>) -> Self {
        Self {
            targets,
            tables: TableCache::default(),
            reps,
            adjust: None,
            inert: Mutex::new(BTreeSet::new()),
        }
    }

    /// Every setting some evaluation so far set and that did nothing where it was set, with
    /// why (sorted, each once).
    pub fn inert_notes(&self) -> Vec<String> {
        self.inert
            .lock()
            .map(|n| n.iter().cloned().collect())
            .unwrap_or_default()
    }

    fn note_inert(&self, label: &str, arm: &scenario::ResolvedArm, settings: &[(String, String)]) {
        // Without the value: whether a setting applies does not depend on its own value, and
        // a tuner tries many.
        let notes = settings.iter().filter_map(|(name, _)| {
            let why = planner::settings::setting(name)?.inert_because(&arm.strategy)?;
            Some(format!(
                "{label}: arm {}: {name} does nothing ({why})",
                arm.name
            ))
        });
        if let Ok(mut set) = self.inert.lock() {
            set.extend(notes);
        }
    }

    /// Measures every target with `settings` applied to its tuned arm (and, with `strategy`,
    /// that arm's strategy replaced).
    pub fn measure(
        &self,
        settings: &[(String, String)],
        strategy: Option<&str>,
    ) -> Result<Vec<Measured>, TuneError> {
        self.targets
            .par_iter()
            .map(|t| {
                let mut ovs = Vec::new();
                if let Some(s) = strategy {
                    // Another strategy in the arm's place: the arm's own settings belong to its
                    // preset, so they go; the scenario's shared settings still apply.
                    ovs.push(scenario::Override {
                        path: vec!["arms".into(), t.arm_name.clone()],
                        setting: None,
                        value: serde_json::json!({ "name": t.arm_name, "strategy": s }),
                        text: format!("arms.{}.strategy={s}", t.arm_name),
                        layer: Layer::Point,
                    });
                }
                for (name, value) in settings {
                    let text = format!("arms.{}.settings.{name}={value}", t.arm_name);
                    ovs.push(
                        scenario::parse_override(&text)
                            .map(|o| o.at(Layer::Point))
                            .map_err(|e| TuneError::Run(e.to_string()))?,
                    );
                }
                let s = t.scenario.with_overrides(&ovs)?;
                let mut r = scenario::resolve(&s, &self.tables)?;
                if let Some(n) = self.reps {
                    r.replications = n;
                }
                if let Some(adjust) = &self.adjust {
                    adjust(&mut r);
                }
                let arm = r
                    .arms
                    .iter()
                    .position(|a| a.name == t.arm_name)
                    .unwrap_or(0);
                if let Some(a) = r.arms.get(arm) {
                    self.note_inert(&t.label, a, settings);
                }
                let runs: Vec<RunMetrics> = (0..r.replications)
                    .into_par_iter()
                    .map(|rep| {
                        run_arm(&r, arm, rep, Default::default(), &Simulated).map(|x| x.total)
                    })
                    .collect::<Result<_, _>>()
                    .map_err(|f| {
                        TuneError::Run(format!("{}: query {}: {}", t.label, f.query, f.error))
                    })?;
                let n = runs.len().max(1) as f64;
                let mean = |f: &dyn Fn(&RunMetrics) -> f64| runs.iter().map(f).sum::<f64>() / n;
                Ok(Measured {
                    wall_ns: mean(&|m| m.value(Metric::WallTime)),
                    cost_usd: mean(&|m| m.value(Metric::Cost)),
                    peak_memory_bytes: mean(&|m| m.value(Metric::PeakMemory)),
                })
            })
            .collect()
    }
}

fn score(objective: Objective, m: &[Measured], base: &[Measured]) -> f64 {
    // Geometric mean of per-scenario ratios to the defaults.
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 1.0 };
    let logs: f64 = m
        .iter()
        .zip(base)
        .map(|(x, b)| {
            let r = match objective {
                Objective::Time => ratio(x.wall_ns, b.wall_ns),
                Objective::Cost => ratio(x.cost_usd, b.cost_usd),
                Objective::Mix(w) => {
                    w * ratio(x.wall_ns, b.wall_ns) + (1.0 - w) * ratio(x.cost_usd, b.cost_usd)
                }
            };
            r.max(1e-12).ln()
        })
        .sum();
    (logs / m.len().max(1) as f64).exp()
}

/// The evaluation of `settings` that measured `measured`, against the defaults' `base`: the
/// objective `sim tune` minimises and `sim eval` prints (the geometric mean over the scenarios
/// of the ratio to the defaults; over the memory cap, 1000 times how far over, so that it is
/// worse than any point under it).
pub fn evaluation(
    settings: Vec<(String, String)>,
    measured: Vec<Measured>,
    base: &[Measured],
    objective: Objective,
    max_memory_bytes: Option<u64>,
) -> Evaluation {
    debug_assert_eq!(measured.len(), base.len(), "one measurement per scenario");
    let feasible = max_memory_bytes
        .is_none_or(|cap| measured.iter().all(|m| m.peak_memory_bytes <= cap as f64));
    let mut value = score(objective, &measured, base);
    if !feasible {
        let over = measured
            .iter()
            .map(|m| m.peak_memory_bytes)
            .fold(0.0, f64::max)
            / max_memory_bytes.unwrap_or(1).max(1) as f64;
        value = 1e3 * over.max(1.0);
    }
    Evaluation {
        settings,
        measured,
        objective: value,
        feasible,
    }
}

pub struct TuneResult {
    pub defaults: Evaluation,
    pub best: Evaluation,
    /// Every distinct evaluation in order, with the best objective so far.
    pub history: Vec<(Evaluation, f64)>,
    /// Parameters that did nothing where some evaluation set them, with why
    /// ([`Evaluator::inert_notes`]).
    pub notes: Vec<String>,
}

struct Search<'a> {
    opts: &'a TuneOptions,
    eval: &'a Evaluator<'a>,
    defaults: Vec<Measured>,
    memo: Mutex<BTreeMap<Vec<String>, Evaluation>>,
    history: Mutex<Vec<(Evaluation, f64)>>,
    bar: indicatif::ProgressBar,
    error: Mutex<Option<TuneError>>,
}

#[derive(Debug)]
struct BudgetSpent;
impl std::fmt::Display for BudgetSpent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("evaluation budget spent")
    }
}
impl std::error::Error for BudgetSpent {}

impl Search<'_> {
    fn settings_at(&self, u: &[f64]) -> Vec<(String, String)> {
        self.opts
            .params
            .iter()
            .zip(u)
            .map(|(p, &x)| (p.name.clone(), p.text(p.value_at(x))))
            .collect()
    }

    /// Objective at a point of the unit cube; `None` when the budget is spent or a run failed.
    fn objective(&self, u: &[f64]) -> Option<f64> {
        let settings = self.settings_at(u);
        let key: Vec<String> = settings.iter().map(|s| s.1.clone()).collect();
        if let Some(e) = self.memo.lock().ok()?.get(&key) {
            return Some(e.objective);
        }
        if self.memo.lock().ok()?.len() >= self.opts.budget {
            return None;
        }
        let measured = match self.eval.measure(&settings, None) {
            Ok(m) => m,
            Err(e) => {
                if let Ok(mut slot) = self.error.lock() {
                    slot.get_or_insert(e);
                }
                return None;
            }
        };
        let e = evaluation(
            settings,
            measured,
            &self.defaults,
            self.opts.objective,
            self.opts.max_memory_bytes,
        );
        let objective = e.objective;
        self.memo.lock().ok()?.insert(key, e.clone());
        let mut h = self.history.lock().ok()?;
        let best = h.last().map(|(_, b)| b.min(objective)).unwrap_or(objective);
        h.push((e, best));
        self.bar.inc(1);
        Some(objective)
    }

    fn best(&self) -> Option<(Vec<f64>, f64)> {
        // Recover the unit-cube position of the best evaluation from its settings.
        let h = self.history.lock().ok()?;
        let (e, _) = h
            .iter()
            .min_by(|a, b| a.0.objective.total_cmp(&b.0.objective))?;
        let u = self
            .opts
            .params
            .iter()
            .zip(&e.settings)
            .map(|(p, (_, text))| {
                let v = match p.kind {
                    crate::sweep::Kind::Bytes => {
                        units::parse_bytes(text).map(|b| b as f64).unwrap_or(p.low)
                    }
                    _ => text.parse().unwrap_or(p.low),
                };
                p.position_of(v)
            })
            .collect();
        Some((u, e.objective))
    }
}

struct NmProblem<'a, 'b>(&'a Search<'b>);

impl CostFunction for NmProblem<'_, '_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, p: &Vec<f64>) -> Result<f64, argmin::core::Error> {
        let clamped: Vec<f64> = p.iter().map(|x| x.clamp(0.0, 1.0)).collect();
        // Outside the box costs as much as its projection plus a penalty, so the simplex comes back.
        let outside: f64 = p.iter().zip(&clamped).map(|(a, b)| (a - b).abs()).sum();
        match self.0.objective(&clamped) {
            Some(v) => Ok(v * (1.0 + outside)),
            None => Err(BudgetSpent.into()),
        }
    }
}

/// Radical inverse in base `b` (Halton).
fn halton(mut i: u64, b: u64) -> f64 {
    let (mut f, mut r) = (1.0, 0.0);
    while i > 0 {
        f /= b as f64;
        r += f * (i % b) as f64;
        i /= b;
    }
    r
}

const PRIMES: [u64; 8] = [2, 3, 5, 7, 11, 13, 17, 19];

pub fn tune(targets: &[Target], opts: &TuneOptions) -> Result<TuneResult, TuneError> {
    if opts.params.is_empty() {
        return Err(TuneError::NoParams);
    }
    for (i, p) in opts.params.iter().enumerate() {
        if opts.params[..i].iter().any(|q| q.name == p.name) {
            return Err(TuneError::RepeatedParam(p.name.clone()));
        }
    }
    if opts.budget == 0 || opts.budget > limits::MAX_TUNE_BUDGET {
        return Err(TuneError::Budget(opts.budget));
    }
    if let Some(n) = opts.reps {
        if n == 0 || n > crate::sweep::MAX_REPLICATIONS {
            return Err(TuneError::Reps(n));
        }
    }
    for t in targets {
        let strategy = t.strategy_name();
        if let Ok(s) = planner::Strategy::preset(&strategy) {
            if let Some(p) = opts.params.iter().find(|p| !s.honours(&p.name)) {
                return Err(TuneError::NotHonoured {
                    arm: t.arm_name.clone(),
                    strategy,
                    param: p.name.clone(),
                    honoured: s.honoured_names().join(", "),
                });
            }
        }
    }
    let eval = Evaluator::new(targets, opts.reps);
    // Check every name on the defaults first: a bad name fails before any search.
    for p in &opts.params {
        let probe = [(p.name.clone(), p.text(p.value_at(0.5)))];
        let t = &targets[0];
        let text = format!("arms.{}.settings.{}={}", t.arm_name, probe[0].0, probe[0].1);
        let s = t.scenario.with_overrides(&[
            scenario::parse_override(&text).map_err(|e| TuneError::Run(e.to_string()))?
        ])?;
        scenario::resolve(&s, &TableCache::default())?;
    }
    let defaults_measured = eval.measure(&[], None)?;
    let defaults = Evaluation {
        settings: Vec::new(),
        measured: defaults_measured.clone(),
        objective: 1.0,
        feasible: opts.max_memory_bytes.is_none_or(|cap| {
            defaults_measured
                .iter()
                .all(|m| m.peak_memory_bytes <= cap as f64)
        }),
    };
    let bar = if opts.progress {
        let b = indicatif::ProgressBar::with_draw_target(
            Some(opts.budget as u64),
            indicatif::ProgressDrawTarget::stderr(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} evaluations  {per_sec}  eta {eta}  {msg}",
        ) {
            b.set_style(style);
        }
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let search = Search {
        opts,
        eval: &eval,
        defaults: defaults_measured,
        memo: Mutex::new(BTreeMap::new()),
        history: Mutex::new(Vec::new()),
        bar,
        error: Mutex::new(None),
    };
    let d = opts.params.len();
    // 1. Axis scans from the centre: each parameter at five positions with the others at the best
    // so far. Settings like these are often nearly separable and have plateaus (a gap above the
    // seek threshold changes nothing), where a simplex alone stalls.
    let mut current = vec![0.5; d];
    let mut current_value = search.objective(&current).unwrap_or(f64::INFINITY);
    'scan: for k in 0..d {
        for pos in [0.0, 0.25, 0.75, 1.0] {
            let mut u = current.clone();
            u[k] = pos;
            let Some(v) = search.objective(&u) else {
                break 'scan;
            };
            if v < current_value {
                current_value = v;
                current = u;
            }
        }
    }
    // Then a few space-filling points (a Halton sequence shifted by the seed) for what the scans
    // cannot see (interactions).
    let mut rng = rand_pcg::Pcg64::seed_from_u64(opts.seed);
    let shift: Vec<f64> = (0..d).map(|_| rng.random::<f64>()).collect();
    let spent = search.memo.lock().map(|m| m.len()).unwrap_or(opts.budget);
    let n0 = opts.budget.saturating_sub(spent) / 3;
    for i in 1..=n0 as u64 {
        let u: Vec<f64> = (0..d)
            .map(|k| (halton(i, PRIMES[k % PRIMES.len()]) + shift[k]).fract())
            .collect();
        if search.objective(&u).is_none() {
            break;
        }
    }
    // 2. Nelder-Mead from the best point, restarted with smaller simplexes while budget lasts.
    for size in [0.25, 0.1, 0.04, 0.015] {
        let Some((start, before)) = search.best() else {
            break;
        };
        if search
            .memo
            .lock()
            .map(|m| m.len() >= opts.budget)
            .unwrap_or(true)
        {
            break;
        }
        let mut simplex = vec![start.clone()];
        for k in 0..d {
            let mut v = start.clone();
            // Step inward so the vertex stays in the box.
            v[k] = if v[k] + size <= 1.0 {
                v[k] + size
            } else {
                v[k] - size
            };
            simplex.push(v);
        }
        // argmin's `NelderMead::init` unwraps the cost of every vertex: evaluate them here first
        // (memoized, so init costs nothing), and stop with the best so far if the budget cannot
        // pay for the whole simplex.
        if simplex.iter().any(|v| search.objective(v).is_none()) {
            break;
        }
        let solver = match NelderMead::new(simplex).with_sd_tolerance(1e-6) {
            Ok(s) => s,
            Err(_) => break,
        };
        let _ = Executor::new(NmProblem(&search), solver)
            .configure(|s| s.max_iters(200))
            .run();
        let after = search.best().map(|b| b.1).unwrap_or(before);
        if let Some(e) = search.error.lock().ok().and_then(|mut e| e.take()) {
            return Err(e);
        }
        if after >= before && size < 0.05 {
            break;
        }
    }
    search.bar.finish_and_clear();
    if let Some(e) = search.error.lock().ok().and_then(|mut e| e.take()) {
        return Err(e);
    }
    let history = search.history.into_inner().unwrap_or_default();
    let best = history
        .iter()
        .map(|h| h.0.clone())
        .min_by(|a, b| a.objective.total_cmp(&b.objective))
        .filter(|b| b.objective < 1.0)
        // Never propose worse than the defaults: if nothing beat them, the defaults stand.
        .unwrap_or_else(|| defaults.clone());
    Ok(TuneResult {
        defaults,
        best,
        history,
        notes: eval.inert_notes(),
    })
}

/// `SETTINGS a = 1048576, b = 8`, ready to paste into a ClickHouse query.
pub fn settings_line(e: &Evaluation, params: &[Param]) -> String {
    if e.settings.is_empty() {
        return "-- the defaults are already the best found; no SETTINGS to change".into();
    }
    let parts: Vec<String> = e
        .settings
        .iter()
        .zip(params)
        .map(|((name, text), p)| {
            let raw = match p.kind {
                crate::sweep::Kind::Bytes => units::parse_bytes(text)
                    .map(|b| b.to_string())
                    .unwrap_or_else(|_| text.clone()),
                _ => text.clone(),
            };
            format!("{name} = {raw}")
        })
        .collect();
    format!("SETTINGS {}", parts.join(", "))
}

/// The same proposal as YAML for a scenario's `settings:`.
pub fn settings_yaml(e: &Evaluation) -> String {
    let mut s = String::from("settings:\n");
    for (name, text) in &e.settings {
        s.push_str(&format!("  {name}: {text}\n"));
    }
    s
}

/// Scales a store model's latencies and bandwidths (robustness view: "what if the model is 2x off").
pub fn scale_store(spec: &mut models::store::StoreSpec, latency: f64, bandwidth: f64) {
    use units::{Bandwidth, Duration};
    let d = |x: &mut Option<Duration>| {
        if let Some(v) = x {
            v.0 = (v.0 as f64 * latency).round() as u64;
        }
    };
    let fb = &mut spec.first_byte;
    d(&mut fb.median);
    d(&mut fb.p95);
    d(&mut fb.mean);
    d(&mut fb.value);
    d(&mut fb.min);
    d(&mut fb.max);
    if let Some(q) = &mut fb.quantiles {
        for (_, v) in q.iter_mut() {
            v.0 = (v.0 as f64 * latency).round() as u64;
        }
    }
    spec.first_byte_per_mib.0 = (spec.first_byte_per_mib.0 as f64 * latency).round() as u64;
    let b = |x: &mut Option<Bandwidth>| {
        if let Some(v) = x {
            v.0 *= bandwidth;
        }
    };
    let sb = &mut spec.stream_bandwidth;
    b(&mut sb.median);
    b(&mut sb.p95);
    b(&mut sb.mean);
    b(&mut sb.value);
    b(&mut sb.min);
    b(&mut sb.max);
    if let Some(q) = &mut sb.quantiles {
        for (_, v) in q.iter_mut() {
            v.0 *= bandwidth;
        }
    }
    spec.nic.0 *= bandwidth;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halton_is_low_discrepancy() {
        assert_eq!(halton(1, 2), 0.5);
        assert_eq!(halton(2, 2), 0.25);
        assert!((halton(1, 3) - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn objective_is_a_geometric_mean_of_ratios() {
        let m = |w: f64| Measured {
            wall_ns: w,
            cost_usd: 1.0,
            peak_memory_bytes: 0.0,
        };
        let s = score(Objective::Time, &[m(2.0), m(8.0)], &[m(1.0), m(16.0)]);
        assert!((s - 1.0).abs() < 1e-12, "{s}");
        assert!("mix:0.5".parse::<Objective>().is_ok());
        assert!("mix:2".parse::<Objective>().is_err());
        assert!("speed".parse::<Objective>().is_err());
    }
}
