//! `sim`: run read strategies against simulated object stores. Data goes to stdout; progress and
//! logs go to stderr. This binary is clap and printing only: one module per command in `cmd/`,
//! the work in the crates below (ARCHITECTURE.md).

mod cmd;

use clap::{Parser, Subcommand};

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
    Run(cmd::run::RunArgs),
    /// Measure a scenario for real against an S3 API endpoint: same reader, same report and
    /// trace as `run` (needs the `measure` feature).
    #[cfg(feature = "measure")]
    Measure(cmd::measure::MeasureArgs),
    /// Check the simulator against a real S3 API: write Parquet files, start the loopback test
    /// bed (S3 server and latency/bandwidth proxy), `sim measure` them and compare with
    /// `sim run` on the injected and on a fitted store model; prints the README's table (needs
    /// the `testbed` feature).
    #[cfg(feature = "testbed")]
    CheckS3(cmd::check_s3::CheckArgs),
    /// Check the peer presets against the real readers they name (pyarrow, polars, DuckDB,
    /// arrow-rs) through the loopback test bed: request counts, ranges, requests in flight and
    /// wall time; prints the README's table (needs the `testbed` feature and the readers'
    /// Python environment).
    #[cfg(feature = "testbed")]
    CheckPeers(cmd::check_peers::CheckPeersArgs),
    /// Sweep settings or model parameters over a grid: every point runs every arm, to CSV and plots.
    Sweep(cmd::sweep::SweepArgs),
    /// Propose the settings that make one arm fastest (or cheapest) over one or more scenarios.
    Tune(cmd::tune::TuneArgs),
    /// Evaluate one point of `sim tune`'s search (settings of the tuned arm as JSON) and print
    /// its objective and metrics as JSON, for tuners outside the process (Optuna).
    Eval(cmd::eval::EvalArgs),
    /// Fit a store model from a captured trace (S3 server access log or `sim run --trace` CSV).
    Fit(cmd::fit::FitArgs),
    /// Replay a trace's requests against a store model and compare (open loop at the recorded
    /// start times, or `--closed-loop`); or `--what-if`: re-plan the ranges the reader needed
    /// under other strategies.
    Replay(cmd::replay::ReplayArgs),
    /// Print the fully resolved scenario (after presets and overrides) and check it.
    Validate(cmd::validate::ValidateArgs),
    /// Which row groups (and Iceberg files) a predicate keeps, by a recorded layout's
    /// row-group min/max: one CSV row per row group.
    Prune(cmd::prune::PruneArgs),
    /// Record layouts of real Parquet files or a local Iceberg table.
    Record {
        #[command(subcommand)]
        what: cmd::record::RecordWhat,
    },
    /// Run the findings checks on the shipped scenarios and print the table of measured vs
    /// simulated values (the README's "How close is the simulator" section).
    Findings(cmd::findings::FindingsArgs),
    /// List every setting a strategy understands, with its value and what it does.
    Settings(cmd::settings::SettingsArgs),
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = run(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run(args) => cmd::run::run(args),
        #[cfg(feature = "measure")]
        Command::Measure(args) => cmd::measure::run(args),
        #[cfg(feature = "testbed")]
        Command::CheckS3(args) => cmd::check_s3::run(args),
        #[cfg(feature = "testbed")]
        Command::CheckPeers(args) => cmd::check_peers::run(args),
        Command::Sweep(args) => cmd::sweep::run(args),
        Command::Tune(args) => cmd::tune::run(args),
        Command::Eval(args) => cmd::eval::run(args),
        Command::Fit(args) => cmd::fit::run(args),
        Command::Replay(args) => cmd::replay::run(args),
        Command::Validate(args) => cmd::validate::run(args),
        Command::Prune(args) => cmd::prune::run(args),
        Command::Record { what } => cmd::record::run(what),
        Command::Findings(args) => cmd::findings::run(args),
        Command::Settings(args) => cmd::settings::run(args),
    }
}
