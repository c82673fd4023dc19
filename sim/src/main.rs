//! `sim`: run read strategies against simulated object stores. Data goes to stdout; progress and
//! logs go to stderr.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "sim",
    version,
    about = "Discrete-event simulator and autotuner for Parquet read strategies on object storage"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario: every arm side by side, baseline = first arm.
    Run(RunArgs),
    /// Measure a scenario for real against an S3 API endpoint: same reader, same report and
    /// trace as `run` (needs the `measure` feature).
    #[cfg(feature = "measure")]
    Measure(sim::measure::cli::MeasureArgs),
    /// Check the simulator against a real S3 API: write Parquet files, start the loopback test
    /// bed (S3 server and latency/bandwidth proxy), `sim measure` them and compare with
    /// `sim run` on the injected and on a fitted store model; prints the README's table (needs
    /// the `testbed` feature).
    #[cfg(feature = "testbed")]
    CheckS3(sim::s3check::cli::CheckArgs),
    /// Sweep settings or model parameters over a grid: every point runs every arm, to CSV and plots.
    Sweep(SweepArgs),
    /// Propose the settings that make one arm fastest (or cheapest) over one or more scenarios.
    Tune(TuneArgs),
    /// Fit a store model from a captured trace (S3 server access log or `sim run --trace` CSV).
    Fit(FitArgs),
    /// Replay a trace's requests against a store model and compare (open loop at the recorded
    /// start times, or `--closed-loop`); or `--what-if`: re-plan the ranges the reader needed
    /// under other strategies.
    Replay(ReplayArgs),
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
    /// Run the findings checks (FINDINGS.md F1-F7) on the shipped scenarios and print the table
    /// of measured vs simulated values (the README's "How close is the simulator" section).
    Findings {
        /// The scenarios directory.
        #[arg(long, default_value = "scenarios")]
        scenarios: PathBuf,
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
    /// Ablation: run `clickhouse-base`, base plus each redesign mechanism R1..R8 alone, and
    /// `clickhouse-redesign`, instead of the scenario's arms.
    #[arg(long)]
    ablation: bool,
    /// Plot each arm's timeline (replication 0, first query) into this directory.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Worker threads for replications and arms (results do not depend on it).
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(clap::Args)]
struct SweepArgs {
    scenario: PathBuf,
    /// An axis: `NAME=VALUES`, VALUES a list (`64KiB,1MiB,4MiB`) or a range with a step rule
    /// (`64KiB..16MiB:x2`, `0..1MiB:+128KiB`). NAME is a setting or a dotted path into the
    /// scenario (`store.first_byte.median`). Default: the scenario's `sweep:` section.
    #[arg(long = "vary", value_name = "NAME=VALUES")]
    vary: Vec<String>,
    /// Replications per point (the same seeds at every point).
    #[arg(long)]
    reps: Option<u32>,
    /// Fixed overrides applied before the sweep.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// Which case of the scenario to sweep (default: the first).
    #[arg(long)]
    case: Option<String>,
    /// CSV output, one row per (point, arm); written as points finish.
    #[arg(short, long, default_value = "sweep.csv")]
    output: PathBuf,
    /// Keep the complete points an interrupted run of the same sweep wrote, and run the rest.
    #[arg(long)]
    resume: bool,
    /// Write plots (PNG and SVG) into this directory.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Worker threads (results do not depend on it).
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(clap::Args)]
struct TuneArgs {
    #[arg(required = true)]
    scenarios: Vec<PathBuf>,
    /// A setting to tune and its range: `NAME=LOW..HIGH[:log]`
    /// (e.g. `input_format_parquet_coalesce_gap_bytes=64KiB..16MiB:log`).
    #[arg(long = "param", value_name = "NAME=LOW..HIGH[:log]", required = true)]
    params: Vec<String>,
    /// `time` (default), `cost`, or `mix:W` (W = weight of time).
    #[arg(long, default_value = "time")]
    objective: String,
    /// Reject settings whose peak reader memory exceeds this (e.g. `8GiB`).
    #[arg(long, value_name = "SIZE")]
    max_memory: Option<String>,
    /// Distinct settings evaluated at most.
    #[arg(long, default_value_t = 40)]
    budget: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The arm whose settings are tuned (default: the first clickhouse-redesign arm).
    #[arg(long)]
    arm: Option<String>,
    /// Replications per evaluation (default: each scenario's).
    #[arg(long)]
    reps: Option<u32>,
    /// Fixed overrides applied to every scenario first.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// Write the convergence plot (PNG and SVG) into this directory.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(clap::Args)]
struct FitArgs {
    trace: PathBuf,
    /// Where to write the fitted model (YAML, loadable as `store:` in a scenario).
    #[arg(short, long)]
    output: PathBuf,
    /// Fail on the first malformed line (default: count them and report the first few).
    #[arg(long)]
    strict: bool,
    /// Write ECDF plots (empirical against each fitted distribution) into this directory.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Fit the stream bandwidth from requests of at least this size (default 4MiB: an access
    /// log's millisecond times blur shorter transfers; a `sim measure` trace's nanosecond times
    /// allow 64KiB).
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes_arg)]
    bandwidth_min_bytes: Option<u64>,
}

fn parse_bytes_arg(s: &str) -> Result<u64, String> {
    units::parse_bytes(s).map_err(|e| e.to_string())
}

#[derive(clap::Args)]
struct ReplayArgs {
    trace: PathBuf,
    /// The store model: a preset name or a YAML file (e.g. one `sim fit` wrote).
    #[arg(long)]
    model: String,
    /// Seed of the store model's randomness (what-if: the root seed of the simulated runs;
    /// give the scenario's to reproduce its seconds).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long)]
    strict: bool,
    /// Closed loop: the requests in recorded order, each worker starting its next request when
    /// its previous one ends (default: open loop, at the recorded start times).
    #[arg(long, conflicts_with = "what_if")]
    closed_loop: bool,
    /// Workers of the closed loop (default: the recording's mean number of requests in flight).
    #[arg(long, requires = "closed_loop")]
    concurrency: Option<usize>,
    /// What-if: re-plan the ranges the recorded reader needed under this strategy preset
    /// (repeatable; needs a `sim run --trace` trace). The recorded run is the first row.
    #[arg(long = "what-if", value_name = "STRATEGY")]
    what_if: Vec<String>,
    /// A setting for the `--what-if` before it (before any `--what-if`: for all of them).
    #[arg(long = "set", value_name = "SETTING=VALUE", requires = "what_if")]
    set: Vec<String>,
    /// Only the rows of this arm of a `sim run --trace` trace (what-if: the recorded run to
    /// re-plan; default: the first in the trace; replay: default every row).
    #[arg(long)]
    arm: Option<String>,
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
        /// Fail on the first file that cannot be recorded (default: skip it and say so).
        #[arg(long)]
        strict: bool,
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
        #[cfg(feature = "measure")]
        Command::Measure(args) => sim::measure::cli::run(args),
        #[cfg(feature = "testbed")]
        Command::CheckS3(args) => sim::s3check::cli::run(args),
        Command::Sweep(args) => cmd_sweep(args),
        Command::Tune(args) => cmd_tune(args),
        Command::Fit(args) => cmd_fit(args),
        Command::Replay(args) => cmd_replay(args),
        Command::Validate { scenario, set } => {
            let overrides = sim::parse_overrides(&set)?;
            let loaded = sim::scenario::load(&scenario, &overrides)?;
            let text = sim::scenario::describe(&loaded)?;
            print!("{text}");
            Ok(())
        }
        Command::Record { what } => cmd_record(what),
        Command::Findings { scenarios } => {
            eprintln!("running the findings checks on {} ...", scenarios.display());
            let checks = sim::findings::Findings::new(&scenarios)
                .all()
                .with_context(|| format!("findings checks on {}", scenarios.display()))?;
            print!("{}", sim::findings::markdown_table(&checks));
            Ok(())
        }
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
        timeline: args.timeline.is_some() || args.plot.is_some(),
        ablation: args.ablation,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()?;
    let started = std::time::Instant::now();
    let out = pool.install(|| sim::run::run_scenario(&loaded, &opts))?;
    eprintln!(
        "ran {} in {:.2}s",
        args.scenario.display(),
        started.elapsed().as_secs_f64()
    );
    out.write_csv_files(args.trace.as_deref(), args.timeline.as_deref())?;
    if let Some(dir) = &args.plot {
        let mut seen = std::collections::BTreeSet::new();
        for (case, arm, rep, query, rows) in &out.timelines {
            if *rep != 0 || !seen.insert((case.clone(), arm.clone())) {
                continue;
            }
            let title = format!("{} / {case} / {arm} / {query}: timeline", loaded.file.name);
            let stem = dir.join(format!("{}-{case}-{arm}-timeline", loaded.file.name));
            for p in sim::plots::timeline_plot(rows, &title, &stem)? {
                eprintln!("plot: {}", p.display());
            }
        }
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

fn cmd_sweep(args: SweepArgs) -> Result<()> {
    let overrides = sim::parse_overrides(&args.set)?;
    let loaded = sim::scenario::load(&args.scenario, &overrides)?;
    let (axes, reps_from_file) = sim::sweep::axes_for(&loaded, &args.vary)?;
    let points: usize = axes.iter().map(|a| a.values.len()).product();
    eprintln!(
        "sweeping {} over {} point{} ({})",
        args.scenario.display(),
        points,
        if points == 1 { "" } else { "s" },
        axes.iter()
            .map(|a| format!("{}: {} values", a.name, a.values.len()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let opts = sim::sweep::SweepOptions {
        axes,
        reps: args.reps.or(reps_from_file),
        output: args.output.clone(),
        resume: args.resume,
        case: args.case,
        progress: true,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()?;
    let started = std::time::Instant::now();
    let result = pool.install(|| sim::sweep::run_sweep(&loaded, &opts))?;
    eprintln!(
        "{} points run, {} kept from before, in {:.1}s; rows in {}",
        result.points_run,
        result.points_resumed,
        started.elapsed().as_secs_f64(),
        args.output.display()
    );
    if let Some(dir) = &args.plot {
        let paths = sim::plots::sweep_plots(&result, &loaded.file.name, dir)?;
        for p in paths {
            eprintln!("plot: {}", p.display());
        }
    }
    Ok(())
}

fn cmd_tune(args: TuneArgs) -> Result<()> {
    let overrides = sim::parse_overrides(&args.set)?;
    let loaded: Vec<_> = args
        .scenarios
        .iter()
        .map(|p| sim::scenario::load(p, &overrides))
        .collect::<Result<_, _>>()?;
    let params: Vec<_> = args
        .params
        .iter()
        .map(|p| sim::tune::parse_param(p))
        .collect::<Result<_, _>>()?;
    let max_memory_bytes = args
        .max_memory
        .as_deref()
        .map(|m| units::parse_bytes(m).with_context(|| format!("--max-memory {m}")))
        .transpose()?;
    let opts = sim::tune::TuneOptions {
        params,
        objective: args.objective.parse()?,
        max_memory_bytes,
        budget: args.budget.max(1),
        seed: args.seed,
        arm: args.arm.clone(),
        reps: args.reps,
        progress: true,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()?;
    let started = std::time::Instant::now();
    let targets = sim::tune::targets(&loaded, args.arm.as_deref())?;
    let out = pool.install(|| sim::tune::report::tune_and_report(&targets, &opts))?;
    eprintln!(
        "tuned in {:.1}s ({} evaluations)",
        started.elapsed().as_secs_f64(),
        out.result.history.len()
    );
    print!("{}", out.text);
    if let Some(dir) = &args.plot {
        for p in sim::tune::report::convergence_plot(&out.result, dir)? {
            eprintln!("plot: {}", p.display());
        }
    }
    Ok(())
}

fn parse_trace(path: &std::path::Path, strict: bool) -> Result<tracefit::ParsedTrace> {
    let opts = tracefit::ParseOptions {
        strict,
        ..Default::default()
    };
    let trace =
        tracefit::parse_file(path, &opts).with_context(|| format!("reading {}", path.display()))?;
    eprintln!("{}", trace.summary());
    Ok(trace)
}

fn cmd_fit(args: FitArgs) -> Result<()> {
    let trace = parse_trace(&args.trace, args.strict)?;
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
    let yaml = fit.to_yaml(&name);
    if let Some(dir) = args.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&args.output, &yaml)
        .with_context(|| format!("writing {}", args.output.display()))?;
    print!("{yaml}");
    eprintln!("model: {}", args.output.display());
    if let Some(dir) = &args.plot {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for p in tracefit::plot_store_fit(&fit, dir, &name)? {
            eprintln!("plot: {}", p.display());
        }
    }
    Ok(())
}

fn cmd_replay(args: ReplayArgs) -> Result<()> {
    let trace = parse_trace(&args.trace, args.strict)?;
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
        let arms = sim::whatif::what_if_arms(&raw).map_err(anyhow::Error::msg)?;
        let options = sim::whatif::WhatIfOptions {
            arm: args.arm.clone(),
            seed: args.seed,
            ..Default::default()
        };
        let report = sim::whatif::what_if(&trace, &spec, &arms, &options)?;
        print!("{}", report.to_table());
        return Ok(());
    }
    let mut trace = trace;
    if let Some(arm) = &args.arm {
        trace
            .records
            .retain(|r| r.sim.as_ref().is_some_and(|s| &s.arm == arm));
    }
    let report = if args.closed_loop {
        tracefit::replay_closed_loop(&trace, &spec, args.seed, args.concurrency)?
    } else {
        tracefit::replay_open_loop(&trace, &spec, args.seed)?
    };
    print!("{}", report.to_table());
    Ok(())
}

fn cmd_record(what: RecordWhat) -> Result<()> {
    let (table, default_name, output) = match what {
        RecordWhat::Parquet {
            paths,
            output,
            strict,
        } => {
            let outcome = record::record_parquet_files(&paths)?;
            for (path, err) in &outcome.skipped {
                eprintln!("skipped {}: {err}", path.display());
            }
            let outcome = if strict {
                record::RecordOutcome {
                    table: outcome.strict()?,
                    skipped: Vec::new(),
                }
            } else {
                outcome
            };
            let name = paths
                .first()
                .and_then(|p| p.file_stem())
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "table".into());
            (outcome.table, name, output)
        }
        RecordWhat::Iceberg {
            metadata_json,
            output,
        } => {
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
    let mut table = table;
    table.provenance.tool = format!(
        "sim {} {}",
        env!("CARGO_PKG_VERSION"),
        table.provenance.tool
    );
    let output = output
        .unwrap_or_else(|| PathBuf::from("traces/layouts").join(format!("{default_name}.layout")));
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
