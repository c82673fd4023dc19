//! `sim fit`: a store model from a captured trace.

use anyhow::{Context, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct FitArgs {
    pub trace: PathBuf,
    /// Where to write the fitted model (YAML, loadable as `store:` in a scenario).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Fail on the first malformed line (default: count them and report the first few).
    #[arg(long)]
    pub strict: bool,
    /// Write ECDF plots (empirical against each fitted distribution) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Fit the stream bandwidth from requests of at least this size (default 4MiB: an access
    /// log's millisecond times blur shorter transfers; a `sim measure` trace's nanosecond times
    /// allow 64KiB).
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes_arg)]
    pub bandwidth_min_bytes: Option<u64>,
    /// Only the rows of this arm of a `sim run --trace` trace (default: the first; its arms
    /// ran one after another in virtual time from 0, so pooled they never happened).
    #[arg(long)]
    pub arm: Option<String>,
}

pub fn parse_bytes_arg(s: &str) -> Result<u64, String> {
    units::parse_bytes(s).map_err(|e| e.to_string())
}

pub fn parse_trace(path: &std::path::Path, strict: bool) -> Result<tracefit::ParsedTrace> {
    let opts = tracefit::ParseOptions {
        strict,
        ..Default::default()
    };
    let trace =
        tracefit::parse_file(path, &opts).with_context(|| format!("reading {}", path.display()))?;
    eprintln!("{}", trace.summary());
    Ok(trace)
}

/// Keeps one arm's rows of a simulated trace, which holds every arm of a run, each from time 0:
/// the arm asked for, else the first (said on stderr, as `doing` it). A trace with no arm
/// labels (an access log, a measured trace) is kept whole.
pub fn keep_one_arm(
    trace: &mut tracefit::ParsedTrace,
    arm: Option<&str>,
    doing: &str,
) -> Result<()> {
    let mut arms: Vec<String> = Vec::new();
    for r in trace.records.iter().filter_map(|r| r.sim.as_ref()) {
        if !arms.contains(&r.arm) {
            arms.push(r.arm.clone());
        }
    }
    let keep = match arm {
        Some(a) if arms.is_empty() => anyhow::bail!(
            "--arm {a}: the trace has no arms (it is not a `sim run --trace` trace, whose rows \
             name the arm that made them); leave --arm out"
        ),
        Some(a) if !arms.iter().any(|x| x == a) => {
            anyhow::bail!("the trace has no arm `{a}`; its arms: {}", arms.join(", "))
        }
        Some(a) => a.to_string(),
        None if arms.len() > 1 => {
            eprintln!(
                "note: {doing} arm {} (the trace holds arms {}; --arm picks another)",
                arms[0],
                arms.join(", ")
            );
            arms[0].clone()
        }
        None => return Ok(()),
    };
    trace
        .records
        .retain(|r| r.sim.as_ref().is_some_and(|s| s.arm == keep));
    Ok(())
}

pub fn run(args: FitArgs) -> Result<()> {
    let mut trace = parse_trace(&args.trace, args.strict)?;
    keep_one_arm(&mut trace, args.arm.as_deref(), "fitting")?;
    let mut options = tracefit::FitOptions::default();
    if let Some(b) = args.bandwidth_min_bytes {
        options.bandwidth_min_bytes = b;
    }
    let fit = tracefit::fit_store(&trace, &options)?;
    let name = args
        .output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fitted".into());
    let yaml = fit.to_checked_yaml(&name)?;
    if let Some(dir) = args.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&args.output, &yaml)
        .with_context(|| format!("writing {}", args.output.display()))?;
    super::out(&yaml)?;
    eprintln!("model: {}", args.output.display());
    if let Some(dir) = &args.plot {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for p in tracefit::plot_store_fit(&fit, dir, &name)? {
            eprintln!("plot: {}", p.display());
        }
    }
    Ok(())
}
