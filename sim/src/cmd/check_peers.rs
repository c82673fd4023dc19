//! `sim check-peers`: the peer presets against the real readers they name, through the
//! loopback S3 test bed; the check's table on stdout (the README's "Checked against the real
//! readers" section), progress on stderr, a failing exit when a row is outside its tolerance.

use anyhow::{bail, Context, Result};
use checks::peers::{PeerCheckConfig, PeerReader, PeerShape};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct CheckPeersArgs {
    /// The Python with pyarrow, polars and DuckDB (`scripts/python-env` makes it).
    #[arg(long, default_value = ".venv/bin/python")]
    pub python: PathBuf,
    /// Only this reader (repeatable): pyarrow, pyarrow-no-prebuffer, polars, duckdb, arrow-rs.
    #[arg(long = "reader", value_parser = parse_reader)]
    pub readers: Vec<PeerReader>,
    /// Only this shape (repeatable): large, small, indexed (the default set), or uneven (asked
    /// for by name only).
    #[arg(long = "shape", value_parser = parse_shape)]
    pub shapes: Vec<PeerShape>,
    /// Runs per reader and shape (their median wall time is compared; the requests, counts,
    /// bytes and requests in flight are the first run's, the one `--capture` keeps).
    #[arg(long, default_value_t = 3)]
    pub reps: u32,
    /// Keep one run's request log per reader and shape here (access log and CSV).
    #[arg(long, value_name = "DIR")]
    pub capture: Option<PathBuf>,
    /// Keep the files, layouts and scenarios here (default: a temporary directory).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Round trip the proxy injects (the README's table: 30ms).
    #[arg(long, default_value = "30ms", value_parser = super::check_s3::parse_duration)]
    pub rtt: u64,
    /// Bandwidth the proxy paces each connection to (the README's table: 10MiB/s).
    #[arg(long, default_value = "10MiB/s", value_parser = super::check_s3::parse_bandwidth)]
    pub bandwidth: u64,
    /// Run pyarrow, polars and DuckDB on this many threads (Arrow's CPU pool, polars' and
    /// DuckDB's threads), and their presets and the scenario's cores with them, instead of
    /// this machine's cores (not with arrow-rs; at most `limits::MAX_THREADS`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=limits::MAX_THREADS as i64))]
    pub cpu_count: Option<u32>,
}

fn parse_reader(s: &str) -> Result<PeerReader, String> {
    PeerReader::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = PeerReader::ALL.iter().map(|r| r.name()).collect();
        format!("no reader `{s}`; the readers are {}", names.join(", "))
    })
}

fn parse_shape(s: &str) -> Result<PeerShape, String> {
    PeerShape::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = PeerShape::EVERY.iter().map(|s| s.name()).collect();
        format!("no shape `{s}`; the shapes are {}", names.join(", "))
    })
}

pub fn run(args: CheckPeersArgs) -> Result<()> {
    let (work_dir, temporary) = match &args.dir {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("sim-check-peers-{}", std::process::id())),
            true,
        ),
    };
    let mut cfg = PeerCheckConfig::standard(work_dir.clone(), args.python.clone());
    if !args.readers.is_empty() {
        cfg.readers = args.readers;
    }
    if !args.shapes.is_empty() {
        cfg.shapes = args.shapes;
    }
    // Bounded as every replication count is (`MAX_REPLICATIONS`; only 0 was refused).
    cfg.reps = super::replications("reps", args.reps)?;
    cfg.capture_dir = args.capture;
    cfg.cpu_count = args.cpu_count;
    cfg.rtt_ns = args.rtt;
    cfg.bandwidth_bytes_per_s = args.bandwidth;
    cfg.progress = true;
    let started = std::time::Instant::now();
    let result = checks::peers::run_check(&cfg);
    if temporary {
        let _ = std::fs::remove_dir_all(&work_dir);
    }
    let report = result.context("checking the peer presets against the real readers")?;
    eprintln!(
        "check-peers: done in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    super::out(&report.markdown())?;
    for k in report.stale_known() {
        eprintln!("check-peers: `{k}` is within its tolerance now; take it out of checks/peers/known-misses.txt");
    }
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
