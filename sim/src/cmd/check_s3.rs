//! The `sim check-s3` command line: the check's table on stdout (the README's "Checked against a
//! real S3 API" section), progress on stderr, a failing exit when a figure is outside its
//! tolerance.

use anyhow::{bail, Context, Result};
use checks::s3check::shapes::Shape;
use checks::s3check::CheckConfig;
use std::path::PathBuf;

/// `sim check-s3 [--rtt 30ms] [--bandwidth 10MiB/s] [--dir DIR] ...`
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Round trip the proxy injects.
    #[arg(long, default_value = "30ms", value_parser = parse_duration)]
    pub rtt: u64,
    /// Bandwidth the proxy paces each connection to (keep streams x this well under the bed's
    /// ~500 MiB/s on two cores).
    #[arg(long, default_value = "10MiB/s", value_parser = parse_bandwidth)]
    pub bandwidth: u64,
    /// Compare this strategy preset (repeatable; default: clickhouse-base and
    /// clickhouse-redesign). Every arm shares the shape's `max_threads`.
    #[arg(long = "strategy", value_parser = parse_strategy)]
    pub strategies: Vec<String>,
    /// Only this shape (repeatable): many-small-files, one-large-file.
    #[arg(long = "shape", value_parser = parse_shape)]
    pub shapes: Vec<Shape>,
    /// Measured runs per arm (the median is compared).
    #[arg(long, default_value_t = 5)]
    pub measured_reps: u32,
    /// Simulated runs per arm and store model (the median is compared).
    #[arg(long, default_value_t = 3)]
    pub simulated_reps: u32,
    /// Keep the files, layouts, scenarios, measured traces and fitted models here (default: a
    /// temporary directory, removed at the end).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// A duration as users write it (`30ms`), in nanoseconds.
pub(super) fn parse_duration(s: &str) -> Result<u64, String> {
    units::parse_duration_ns(s).map_err(|e| e.to_string())
}

/// A positive bandwidth as users write it (`10MiB/s`), in bytes per second.
pub(super) fn parse_bandwidth(s: &str) -> Result<u64, String> {
    match units::parse_bandwidth(s) {
        Ok(b) if b >= 1.0 => Ok(b as u64),
        Ok(_) => Err("the bandwidth must be positive, e.g. `10MiB/s`".into()),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_strategy(s: &str) -> Result<String, String> {
    planner::Strategy::preset(s)
        .map(|_| s.to_string())
        .map_err(|e| e.to_string())
}

fn parse_shape(s: &str) -> Result<Shape, String> {
    Shape::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Shape::ALL.iter().map(|s| s.name()).collect();
        format!("no shape `{s}`; the shapes are {}", names.join(", "))
    })
}

/// Runs the command.
pub fn run(args: CheckArgs) -> Result<()> {
    let (work_dir, temporary) = match &args.dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("sim-check-s3-{}", std::process::id())),
            true,
        ),
    };
    let mut cfg = CheckConfig::standard(work_dir.clone());
    cfg.rtt_ns = args.rtt;
    cfg.bandwidth_bytes_per_s = args.bandwidth;
    if !args.shapes.is_empty() {
        cfg.shapes = args.shapes;
    }
    if !args.strategies.is_empty() {
        for (i, s) in args.strategies.iter().enumerate() {
            if args.strategies[..i].contains(s) {
                bail!("--strategy {s} is given twice; give each preset once");
            }
        }
        cfg.strategies = args.strategies;
    }
    // Bounded as every replication count is (`MAX_REPLICATIONS`): 4e9 aborted on an
    // allocation of 64 GB.
    cfg.measured_reps = super::replications("measured-reps", args.measured_reps)?;
    cfg.simulated_reps = super::replications("simulated-reps", args.simulated_reps)?;
    cfg.progress = true;
    let started = std::time::Instant::now();
    let result = checks::s3check::run_check(&cfg);
    if temporary {
        let _ = std::fs::remove_dir_all(&work_dir);
    } else {
        eprintln!(
            "check-s3: files, scenarios, traces and fitted models kept in {}",
            work_dir.display()
        );
    }
    let report = result.context("checking the simulator against the loopback S3 test bed")?;
    eprintln!("check-s3: done in {:.1}s", started.elapsed().as_secs_f64());
    super::out(&report.markdown())?;
    let failures = report.failures();
    if !failures.is_empty() {
        bail!(
            "{} figures outside their tolerance:\n  {}",
            failures.len(),
            failures.join("\n  ")
        );
    }
    Ok(())
}
