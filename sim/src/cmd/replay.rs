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
    /// Fail on the first malformed line (default: count them and report the first few).
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
    // Which run of a multi-run trace to replay (what-if: to re-plan; default: the first run
    // the trace holds, said on stderr, or for a what-if in the table's header).
    #[command(flatten)]
    pub run: super::fit::RunArgs,
}

/// Whether `--model` names a file rather than a preset: it has a directory part or a YAML
/// extension (preset names have neither).
fn names_a_file(model: &str) -> bool {
    let path = std::path::Path::new(model);
    path.components().count() > 1
        || path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// The store model `--model` names: a YAML file, else a preset. A file that is not there is
/// said to be missing (it was reported as an unknown preset named by its path).
fn load_model(model: &str) -> Result<models::store::StoreSpec> {
    let path = std::path::Path::new(model);
    if path.exists() {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {model}"))?;
        return models::store::StoreSpec::from_yaml(&text).with_context(|| format!("in {model}"));
    }
    if names_a_file(model) {
        anyhow::bail!(
            "--model {model}: no such file (give a store model's YAML file, or a preset name such as s3-standard)"
        );
    }
    Ok(models::store::StoreSpec::preset(model)?)
}

pub fn run(args: ReplayArgs) -> Result<()> {
    let mut trace = super::fit::parse_trace(&args.trace, args.strict)?;
    let spec = load_model(&args.model)?;
    if !args.what_if.is_empty() {
        // `--set` belongs to the `--what-if` before it: only the raw order says which.
        let raw: Vec<String> = std::env::args().collect();
        let arms = experiments::whatif::what_if_arms(&raw).map_err(anyhow::Error::msg)?;
        // The what-if picks the first run of what is left, and names it in its header.
        if args.layout.is_none() {
            tracefit::keep_one_run(&mut trace, &args.run.choice(), false, "re-planning")?;
        }
        let options = experiments::whatif::WhatIfOptions {
            arm: args.run.arm.clone(),
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
    // A simulated trace holds every case, arm, replication and query of a run, each from
    // time 0; replaying them together would mix their requests. One run: the one asked for,
    // else the first, said so.
    super::fit::keep_one_run(&mut trace, &args.run, "replaying")?;
    let report = if args.closed_loop {
        tracefit::replay_closed_loop(&trace, &spec, args.seed, args.concurrency)?
    } else {
        tracefit::replay_open_loop(&trace, &spec, args.seed)?
    };
    super::out(&report.to_table())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_model_file_is_said_missing_and_a_preset_name_is_a_preset() {
        assert!(names_a_file("models/m.yaml") && names_a_file("m.yml") && names_a_file("./m"));
        assert!(!names_a_file("s3-standard"));
        let err = load_model("/no/such/dir/m.yaml").unwrap_err().to_string();
        assert!(
            err.contains("no such file") && err.contains("/no/such/dir/m.yaml"),
            "{err}"
        );
        assert!(load_model("s3-standard").is_ok());
        let err = format!("{:#}", load_model("no-such-preset").unwrap_err());
        assert!(err.contains("no-such-preset"), "{err}");
    }
}
