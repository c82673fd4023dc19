//! The `sim measure` command line: mirrors `sim run` (same report on stdout, same trace file,
//! progress on stderr), with where the objects are instead of a store model.

use anyhow::{Context, Result};
use drive_s3::{Measured, RealStore, S3Endpoint};
use experiments::run::{run_scenario_keeping_trace, RunOptions};
use std::path::PathBuf;

/// `sim measure SCENARIO --endpoint URL --bucket B ...`
#[derive(Debug, clap::Args)]
pub struct MeasureArgs {
    pub scenario: PathBuf,
    /// The S3 API endpoint, e.g. `http://127.0.0.1:9000` (path-style requests).
    #[arg(long)]
    pub endpoint: String,
    #[arg(long)]
    pub bucket: String,
    /// Access key id (without keys, requests are sent unsigned).
    #[arg(long, requires = "secret_key")]
    pub access_key: Option<String>,
    #[arg(long, requires = "access_key")]
    pub secret_key: Option<String>,
    /// Signing region (default: us-east-1; with the keys only: unsigned requests have none).
    #[arg(long)]
    pub region: Option<String>,
    /// Key prefix: data file i is the object `PREFIX/<its recorded path>`.
    #[arg(long, default_value = "")]
    pub prefix: String,
    /// Override a value: `path=value` (as for `sim run`; the store model's retry policy,
    /// timeout, progress chunk and prices apply; its latencies, bandwidths, NIC and rate limit
    /// do not, and a --set of them is refused).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Only these cases (repeatable).
    #[arg(long = "case")]
    pub cases: Vec<String>,
    /// Only these arms (repeatable).
    #[arg(long = "arm")]
    pub arms: Vec<String>,
    /// Replications (default 1).
    #[arg(long)]
    pub reps: Option<u32>,
    /// Print the report as JSON instead of a table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the report as CSV instead of a table.
    #[arg(long)]
    pub csv: bool,
    /// Write the request trace (one row per HTTP request; the format `sim fit` and `sim replay`
    /// read).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Write the timeline (GETs in flight, bytes in flight, pool memory over time), as
    /// `sim run --timeline` does.
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// Open this many connections (uncounted 1-byte GETs) before each case.
    #[arg(long, default_value_t = 0)]
    pub warm_connections: u32,
    /// Threads running the requests (1 to 4).
    #[arg(long, default_value_t = 2,
          value_parser = clap::value_parser!(u16).range(1..=drive_s3::MAX_IO_WORKERS as i64))]
    pub io_workers: u16,
}

/// Runs the command.
pub fn run(args: MeasureArgs) -> Result<()> {
    let overrides = super::parse_overrides(&args.set)?;
    for o in &overrides {
        drive_s3::support::check_override(&o.path)
            .map_err(|e| anyhow::anyhow!("--set {}: {e}", o.text))?;
    }
    let loaded = scenario::load(&args.scenario, &overrides)?;
    let endpoint = S3Endpoint {
        endpoint: args.endpoint.clone(),
        bucket: args.bucket.clone(),
        access_key: args.access_key,
        secret_key: args.secret_key,
        region: args.region,
    };
    let store = RealStore {
        store: drive_s3::connect(&endpoint)?,
        prefix: args.prefix,
    };
    let opts = RunOptions {
        // A measurement is slow and real: one replication unless asked.
        replications: Some(super::reps(args.reps)?.unwrap_or(1)),
        cases: args.cases,
        arms: args.arms,
        trace: args.trace.is_some(),
        timeline: args.timeline.is_some(),
        ..Default::default()
    };
    // Each warm connection is a request in flight at once: bounded as any pool of threads.
    if u64::from(args.warm_connections) > limits::MAX_THREADS {
        anyhow::bail!(
            "--warm-connections {}: give at most {} (limits::MAX_THREADS)",
            args.warm_connections,
            limits::MAX_THREADS
        );
    }
    let rt = drive_s3::runtime(usize::from(args.io_workers))?;
    let runner = Measured::new(store, &rt, args.warm_connections, true);
    let started = std::time::Instant::now();
    let out = match run_scenario_keeping_trace(&loaded, &opts, &runner) {
        Ok(out) => out,
        Err(stopped) => {
            // What completed before the failure is still written; the failure is said once,
            // by the caller.
            if let Some(path) = &args.trace {
                std::fs::write(path, &stopped.trace_csv).with_context(|| {
                    format!("writing the trace of what completed to {}", path.display())
                })?;
                eprintln!(
                    "trace of what completed before the failure: {} ({} requests)",
                    path.display(),
                    stopped.trace_rows
                );
            }
            return Err(stopped.error.into());
        }
    };
    super::notes(&out.notes);
    eprintln!(
        "note: lower_bound and efficiency of a measurement: the chain of dependent GETs at the \
         smallest first byte measured, and the decode work; not the bytes over a NIC (this \
         machine's is not known) nor any figure of the store model"
    );
    eprintln!(
        "measured {} against {} bucket {} in {:.2}s",
        args.scenario.display(),
        args.endpoint,
        args.bucket,
        started.elapsed().as_secs_f64()
    );
    out.write_csv_files(args.trace.as_deref(), args.timeline.as_deref())?;
    if args.json {
        super::out(&format!("{}\n", out.report.to_json()))?;
    } else if args.csv {
        super::out(&out.report.to_csv()?)?;
    } else {
        super::out(&out.report.to_table())?;
    }
    Ok(())
}
