//! `sim tune`: the settings that make one arm fastest (or cheapest).

use anyhow::{Context, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct TuneArgs {
    #[arg(required = true)]
    pub scenarios: Vec<PathBuf>,
    /// A setting to tune and its range: `NAME=LOW..HIGH[:log]`
    /// (e.g. `input_format_parquet_coalesce_gap_bytes=64KiB..16MiB:log`).
    #[arg(long = "param", value_name = "NAME=LOW..HIGH[:log]", required = true)]
    pub params: Vec<String>,
    /// `time` (default), `cost`, or `mix:W` (W = weight of time).
    #[arg(long, default_value = "time")]
    pub objective: String,
    /// Reject settings whose peak reader memory exceeds this (e.g. `8GiB`).
    #[arg(long, value_name = "SIZE")]
    pub max_memory: Option<String>,
    /// Distinct settings evaluated at most.
    #[arg(long, default_value_t = 40)]
    pub budget: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The arm whose settings are tuned (default: the first clickhouse-redesign arm).
    #[arg(long)]
    pub arm: Option<String>,
    /// Replications per evaluation (default: each scenario's).
    #[arg(long)]
    pub reps: Option<u32>,
    /// Fixed overrides applied to every scenario first.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Write the convergence plot (PNG and SVG) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    #[arg(long)]
    pub threads: Option<usize>,
}

pub fn run(args: TuneArgs) -> Result<()> {
    let overrides = super::parse_overrides(&args.set)?;
    let loaded: Vec<_> = args
        .scenarios
        .iter()
        .map(|p| scenario::load(p, &overrides))
        .collect::<Result<_, _>>()?;
    let params: Vec<_> = args
        .params
        .iter()
        .map(|p| experiments::tune::parse_param(p))
        .collect::<Result<_, _>>()?;
    let max_memory_bytes = args
        .max_memory
        .as_deref()
        .map(|m| units::parse_bytes(m).with_context(|| format!("--max-memory {m}")))
        .transpose()?;
    let opts = experiments::tune::TuneOptions {
        params,
        objective: args.objective.parse()?,
        max_memory_bytes,
        budget: args.budget,
        seed: args.seed,
        arm: args.arm.clone(),
        reps: super::reps(args.reps)?,
        progress: true,
    };
    let pool = super::pool(args.threads)?;
    let started = std::time::Instant::now();
    let targets = experiments::tune::targets(&loaded, args.arm.as_deref())?;
    let out = pool.install(|| experiments::tune::report::tune_and_report(&targets, &opts))?;
    eprintln!(
        "tuned in {:.1}s ({} evaluations)",
        started.elapsed().as_secs_f64(),
        out.result.history.len()
    );
    super::out(&out.text)?;
    if let Some(dir) = &args.plot {
        for p in experiments::tune::report::convergence_plot(&out.result, dir)? {
            eprintln!("plot: {}", p.display());
        }
    }
    Ok(())
}
