//! `sim tune`: the settings that make one arm fastest (or cheapest).

use anyhow::{Context, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct TuneArgs {
    #[command(flatten)]
    pub eval: EvalOn,
    /// A setting to tune and its range: `NAME=LOW..HIGH[:log]`
    /// (e.g. `input_format_parquet_coalesce_gap_bytes=64KiB..16MiB:log`).
    #[arg(long = "param", value_name = "NAME=LOW..HIGH[:log]", required = true)]
    pub params: Vec<String>,
    /// Distinct settings evaluated at most.
    #[arg(long, default_value_t = 40)]
    pub budget: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write every evaluation in order (objective, best so far, feasible, the settings) to this
    /// CSV file.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Write the convergence plot (PNG and SVG) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

/// What `sim tune` and `sim eval` evaluate a point on, and how it is scored.
#[derive(clap::Args)]
pub struct EvalOn {
    #[arg(required = true)]
    pub scenarios: Vec<PathBuf>,
    /// `time` (default), `cost`, or `mix:W` (W = weight of time).
    #[arg(long, default_value = "time")]
    pub objective: String,
    /// Settings whose peak reader memory exceeds this are infeasible (e.g. `8GiB`).
    #[arg(long, value_name = "SIZE")]
    pub max_memory: Option<String>,
    /// The arm whose settings are tuned (default: the first clickhouse-redesign arm).
    #[arg(long)]
    pub arm: Option<String>,
    /// Replications per evaluation (default: each scenario's).
    #[arg(long)]
    pub reps: Option<u32>,
    /// Fixed overrides applied to every scenario first.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    #[arg(long)]
    pub threads: Option<usize>,
}

/// [`EvalOn`] read: the scenarios loaded, the objective and cap parsed.
pub struct Loaded {
    pub scenarios: Vec<scenario::LoadedScenario>,
    pub objective: experiments::tune::Objective,
    pub max_memory_bytes: Option<u64>,
    pub reps: Option<u32>,
}

impl EvalOn {
    pub fn load(&self) -> Result<Loaded> {
        let overrides = super::parse_overrides(&self.set)?;
        let scenarios = self
            .scenarios
            .iter()
            .map(|p| scenario::load(p, &overrides))
            .collect::<Result<_, _>>()?;
        let max_memory_bytes = self
            .max_memory
            .as_deref()
            .map(|m| units::parse_bytes(m).with_context(|| format!("--max-memory {m}")))
            .transpose()?;
        Ok(Loaded {
            scenarios,
            objective: self.objective.parse()?,
            max_memory_bytes,
            reps: super::reps(self.reps)?,
        })
    }
}

pub fn run(args: TuneArgs) -> Result<()> {
    let on = args.eval.load()?;
    let loaded = on.scenarios;
    let params: Vec<_> = args
        .params
        .iter()
        .map(|p| experiments::tune::parse_param(p))
        .collect::<Result<_, _>>()?;
    let opts = experiments::tune::TuneOptions {
        params,
        objective: on.objective,
        max_memory_bytes: on.max_memory_bytes,
        budget: args.budget,
        seed: args.seed,
        arm: args.eval.arm.clone(),
        reps: on.reps,
        progress: true,
    };
    let pool = super::pool(args.eval.threads)?;
    let started = std::time::Instant::now();
    let targets = experiments::tune::targets(&loaded, args.eval.arm.as_deref())?;
    let out = pool.install(|| experiments::tune::report::tune_and_report(&targets, &opts))?;
    super::notes(&out.result.notes);
    eprintln!(
        "tuned in {:.1}s ({} evaluations)",
        started.elapsed().as_secs_f64(),
        out.result.history.len()
    );
    super::out(&out.text)?;
    if let Some(path) = &args.history {
        let text = experiments::tune::report::history_csv(&out.result, &opts)
            .context("writing the history")?;
        std::fs::write(path, text).with_context(|| format!("{}", path.display()))?;
        eprintln!("history: {}", path.display());
    }
    if let Some(dir) = &args.plot {
        for p in experiments::tune::report::convergence_plot(&out.result, &targets, &opts, dir)? {
            eprintln!("plot: {}", p.display());
        }
    }
    Ok(())
}
