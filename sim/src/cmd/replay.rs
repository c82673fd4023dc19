//! `sim replay`: a trace replayed against a store model, or re-planned under other strategies.

use anyhow::{Context, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct ReplayArgs {
    pub trace: PathBuf,
    /// The store model: a preset name or a YAML file (e.g. one `sim fit` wrote).
    #[arg(long)]
    pub model: String,
    /// Seed of the store model's randomness (what-if: the root seed of the simulated runs;
    /// give the scenario's to reproduce its seconds).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    pub strict: bool,
    /// Closed loop: the requests in recorded order, each worker starting its next request when
    /// its previous one ends (default: open loop, at the recorded start times).
    #[arg(long, conflicts_with = "what_if")]
    pub closed_loop: bool,
    /// Workers of the closed loop (default: the recording's mean number of requests in flight;
    /// an access log, whose start times are whole seconds, has none and needs it given).
    #[arg(long, requires = "closed_loop")]
    pub concurrency: Option<usize>,
    /// What-if: re-plan the ranges the recorded reader needed under this strategy preset
    /// (repeatable; needs a `sim run --trace` trace). The recorded run is the first row.
    #[arg(long = "what-if", value_name = "STRATEGY")]
    pub what_if: Vec<String>,
    /// A setting for the `--what-if` before it (before any `--what-if`: for all of them).
    #[arg(long = "set", value_name = "SETTING=VALUE", requires = "what_if")]
    pub set: Vec<String>,
    /// What-if of a real reader's run: the recorded layout of the files it read (`sim record`);
    /// the needed ranges are then derived from the layout, the log's GETs and `--columns`
    /// (the trace must say where each GET's bytes lie: the test bed's request CSV).
    #[arg(long, requires = "what_if", requires = "columns")]
    pub layout: Option<PathBuf>,
    /// With `--layout`: the columns the query read, by name, comma-separated.
    #[arg(long, value_delimiter = ',', requires = "layout")]
    pub columns: Vec<String>,
    /// Only the rows of this arm of a `sim run --trace` trace (what-if: the recorded run to
    /// re-plan; default: the first in the trace; replay: default every row).
    #[arg(long)]
    pub arm: Option<String>,
}

pub fn run(args: ReplayArgs) -> Result<()> {
    let trace = super::fit::parse_trace(&args.trace, args.strict)?;
    let spec = if std::path::Path::new(&args.model).exists() {
        let text = std::fs::read_to_string(&args.model)
            .with_context(|| format!("reading {}", args.model))?;
        models::store::StoreSpec::from_yaml(&text).with_context(|| format!("in {}", args.model))?
    } else {
        models::store::StoreSpec::preset(&args.model)?
    };
    if !args.what_if.is_empty() {
        // `--set` belongs to the `--what-if` before it: only the raw order says which.
        let raw: Vec<String> = std::env::args().collect();
        let arms = experiments::whatif::what_if_arms(&raw).map_err(anyhow::Error::msg)?;
        let options = experiments::whatif::WhatIfOptions {
            arm: args.arm.clone(),
            seed: args.seed,
            ..Default::default()
        };
        let (trace, notes) = match &args.layout {
            None => (trace, Vec::new()),
            Some(path) => {
                let bytes = scenario::layout_file::read(path)
                    .with_context(|| format!("reading the layout {}", path.display()))?;
                let table = layout::format::read_table(&bytes)
                    .with_context(|| format!("in the layout {}", path.display()))?;
                table
                    .validate()
                    .with_context(|| format!("the layout {} is inconsistent", path.display()))?;
                experiments::whatif::needed_from_reads(&trace, &table, &args.columns)?
            }
        };
        let mut report = experiments::whatif::what_if(&trace, &spec, &arms, &options)?;
        report.notes.splice(0..0, notes);
        super::out(&report.to_table())?;
        return Ok(());
    }
    let mut trace = trace;
    // A simulated trace holds every arm of a run; replaying them together would mix their
    // requests. One arm at a time: the one asked for, else the first, said so.
    super::fit::keep_one_arm(&mut trace, args.arm.as_deref(), "replaying")?;
    let report = if args.closed_loop {
        tracefit::replay_closed_loop(&trace, &spec, args.seed, args.concurrency)?
    } else {
        tracefit::replay_open_loop(&trace, &spec, args.seed)?
    };
    super::out(&report.to_table())?;
    Ok(())
}
