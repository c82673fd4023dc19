//! `sim`: run read strategies against simulated object stores. Data goes to stdout; progress and
//! logs go to stderr.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "sim", version, about = "Discrete-event simulator and autotuner for Parquet read strategies on object storage")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario: every arm side by side, baseline = first arm.
    Run(RunArgs),
    /// Print the fully resolved scenario (after presets and overrides) and check it.
    Validate {
        scenario: PathBuf,
        /// Override a value: `path=value` (e.g. `store.first_byte.median=30ms`, or a setting name).
        #[arg(long = "set", value_name = "PATH=VALUE")]
        set: Vec<String>,
    },
    /// Record layouts of real Parquet files or a local Iceberg table.
    Record {
        #[command(subcommand)]
        what: RecordWhat,
    },
    /// List every setting a strategy understands, with its value and what it does.
    Settings {
        /// Strategy preset (default: clickhouse-redesign).
        #[arg(default_value = "clickhouse-redesign")]
        strategy: String,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    scenario: PathBuf,
    /// Override a value: `path=value` (e.g. `store.first_byte.median=30ms`, or a setting name
    /// such as `input_format_parquet_coalesce_gap_bytes=1MiB` for every arm).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// Replications (default: the scenario's `replications`).
    #[arg(long)]
    reps: Option<u32>,
    /// Root seed (default: the scenario's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Only these cases (repeatable).
    #[arg(long = "case")]
    cases: Vec<String>,
    /// Print the report as JSON instead of a table.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print the report as CSV instead of a table.
    #[arg(long)]
    csv: bool,
    /// Write the request trace (one row per HTTP request; the format `sim replay` reads).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Write a timeline CSV (concurrency, bytes in flight, pool memory over time).
    #[arg(long, value_name = "FILE")]
    timeline: Option<PathBuf>,
    /// Worker threads for replications and arms (results do not depend on it).
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(Subcommand)]
enum RecordWhat {
    /// Parquet files or directories of them.
    Parquet {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Output layout file (default: traces/layouts/<name>.layout).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// A local Iceberg table, from its metadata JSON.
    Iceberg {
        metadata_json: PathBuf,
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(args) => cmd_run(args),
        Command::Validate { scenario, set } => {
            let overrides = sim::parse_overrides(&set)?;
            let loaded = sim::scenario::load(&scenario, &overrides)?;
            let text = sim::scenario::describe(&loaded)?;
            print!("{text}");
            Ok(())
        }
        Command::Record { what } => cmd_record(what),
        Command::Settings { strategy } => {
            let s = planner::Strategy::preset(&strategy)?;
            print!("{}", sim::describe_settings(&s));
            Ok(())
        }
    }
}

fn cmd_run(args: RunArgs) -> Result<()> {
    let overrides = sim::parse_overrides(&args.set)?;
    let loaded = sim::scenario::load(&args.scenario, &overrides)?;
    let opts = sim::run::RunOptions {
        replications: args.reps,
        seed: args.seed,
        cases: args.cases,
        trace: args.trace.is_some(),
        timeline: args.timeline.is_some(),
    };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(args.threads.unwrap_or(0)).build()?;
    let started = std::time::Instant::now();
    let out = pool.install(|| sim::run::run_scenario(&loaded, &opts))?;
    eprintln!("ran {} in {:.2}s", args.scenario.display(), started.elapsed().as_secs_f64());
    if let Some(path) = &args.trace {
        std::fs::write(path, &out.trace_csv).with_context(|| format!("writing the trace to {}", path.display()))?;
        eprintln!("trace: {} ({} requests)", path.display(), out.trace_rows);
    }
    if let Some(path) = &args.timeline {
        std::fs::write(path, &out.timeline_csv).with_context(|| format!("writing the timeline to {}", path.display()))?;
        eprintln!("timeline: {}", path.display());
    }
    if args.json {
        println!("{}", out.report.to_json());
    } else if args.csv {
        print!("{}", out.report.to_csv()?);
    } else {
        print!("{}", out.report.to_table());
    }
    Ok(())
}

fn cmd_record(what: RecordWhat) -> Result<()> {
    let (table, default_name, output) = match what {
        RecordWhat::Parquet { paths, output } => {
            let outcome = record::record_parquet_files(&paths)?;
            for (path, err) in &outcome.skipped {
                eprintln!("skipped {}: {err}", path.display());
            }
            let name = paths
                .first()
                .and_then(|p| p.file_stem())
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "table".into());
            (outcome.table, name, output)
        }
        RecordWhat::Iceberg { metadata_json, output } => {
            let table = record::record_iceberg(&metadata_json)?;
            let name = metadata_json
                .parent()
                .and_then(|p| p.parent())
                .and_then(|p| p.file_name())
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "iceberg".into());
            (table, name, output)
        }
    };
    let output = output.unwrap_or_else(|| PathBuf::from("traces/layouts").join(format!("{default_name}.layout")));
    if let Some(dir) = output.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut bytes = Vec::new();
    layout::format::write_table(&table, &mut bytes)?;
    std::fs::write(&output, &bytes).with_context(|| format!("writing {}", output.display()))?;
    eprintln!(
        "recorded {} files, {} column chunks, {} of data into {} ({})",
        table.files.len(),
        table.column_chunk_count(),
        units::format_bytes(table.total_bytes()),
        output.display(),
        units::format_bytes(bytes.len() as u64)
    );
    Ok(())
}
