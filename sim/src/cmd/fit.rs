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
    #[command(flatten)]
    pub run: RunArgs,
}

/// Which run of a `sim run --trace` or `sim measure --trace` trace: it holds every case, arm,
/// replication and query of a run, each from time 0, so pooled they never happened.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// Only the rows of this case (default: the first in the trace, said on stderr).
    #[arg(long)]
    pub case: Option<String>,
    /// Only the rows of this arm (default: the first in the trace, said on stderr).
    #[arg(long)]
    pub arm: Option<String>,
    /// Only the rows of this replication (default: the first in the trace, said on stderr).
    #[arg(long)]
    pub replication: Option<u32>,
    /// Only the rows of this query (default: the first in the trace, said on stderr).
    #[arg(long)]
    pub query: Option<String>,
}

impl RunArgs {
    pub fn choice(&self) -> tracefit::RunChoice {
        tracefit::RunChoice {
            case: self.case.clone(),
            arm: self.arm.clone(),
            replication: self.replication,
            query: self.query.clone(),
        }
    }
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

/// Keeps one run's rows of a simulated trace (see [`RunArgs`]): the one asked for, else the
/// first, each pick said on stderr as `doing` it. A trace with no run labels (an access log, a
/// request log) is kept whole.
pub fn keep_one_run(trace: &mut tracefit::ParsedTrace, run: &RunArgs, doing: &str) -> Result<()> {
    for note in tracefit::keep_one_run(trace, &run.choice(), true, doing)? {
        eprintln!("note: {note}");
    }
    Ok(())
}

pub fn run(args: FitArgs) -> Result<()> {
    let mut trace = parse_trace(&args.trace, args.strict)?;
    keep_one_run(&mut trace, &args.run, "fitting")?;
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
