//! `sim sweep`: a grid over settings or model parameters, to CSV and plots.

use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub command: Option<SweepCommand>,
    /// The scenario to sweep.
    #[arg(required = true)]
    pub scenario: Option<PathBuf>,
    /// An axis: `NAME=VALUES`, VALUES a list (`64KiB,1MiB,4MiB`) or a range with a step rule
    /// (`64KiB..16MiB:x2`, `0..1MiB:+128KiB`). NAME is a setting or a dotted path into the
    /// scenario (`store.first_byte.median`). Default: the scenario's `sweep:` section.
    #[arg(long = "vary", value_name = "NAME=VALUES")]
    pub vary: Vec<String>,
    /// Replications per point (the same seeds at every point).
    #[arg(long)]
    pub reps: Option<u32>,
    /// Fixed overrides applied before the sweep.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Which case of the scenario to sweep (default: the first).
    #[arg(long)]
    pub case: Option<String>,
    /// CSV output, one row per (point, arm); written as points finish.
    #[arg(short, long, default_value = "sweep.csv")]
    pub output: PathBuf,
    /// Keep the complete points an interrupted run of the same sweep wrote, and run the rest.
    #[arg(long)]
    pub resume: bool,
    /// Write plots (PNG and SVG) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Worker threads (results do not depend on it).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Run only shard K of N (K from 0 to N-1): the points K, K+N, K+2N, ... of the grid, to
    /// a CSV of their own; `sim sweep merge` joins the N CSVs into the one-machine CSV.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<experiments::sweep::Shard>,
}

#[derive(clap::Subcommand)]
pub enum SweepCommand {
    /// Join the CSVs of a sharded sweep (`--shard K/N`, every K once) into the CSV one machine
    /// would have written, byte for byte.
    Merge(MergeArgs),
}

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The shards' CSVs, in any order.
    #[arg(required = true)]
    pub parts: Vec<PathBuf>,
    /// The merged CSV.
    #[arg(short, long)]
    pub output: PathBuf,
}

fn parse_shard(s: &str) -> Result<experiments::sweep::Shard, String> {
    experiments::sweep::Shard::parse(s)
}

fn merge(args: MergeArgs) -> Result<()> {
    let m = experiments::sweep::merge::merge(&args.parts, &args.output)?;
    eprintln!(
        "{} shards merged: {} points, {} rows in {}",
        m.shards,
        m.points,
        m.rows,
        args.output.display()
    );
    Ok(())
}

pub fn run(args: SweepArgs) -> Result<()> {
    if let Some(SweepCommand::Merge(m)) = args.command {
        return merge(m);
    }
    let Some(scenario) = args.scenario.clone() else {
        anyhow::bail!("give the scenario to sweep (or `sim sweep merge PARTS... -o OUT`)");
    };
    if args.shard.is_some() && args.plot.is_some() {
        anyhow::bail!(
            "--plot with --shard would plot part of the grid; merge the shards (`sim sweep merge PARTS... -o all.csv`), then the same sweep with `-o all.csv --resume --plot DIR` plots it without running a point"
        );
    }
    let overrides = super::parse_overrides(&args.set)?;
    let loaded = scenario::load(&scenario, &overrides)?;
    let (axes, reps_from_file) = experiments::sweep::axes_for(&loaded, &args.vary)?;
    let grid_points: usize = axes.iter().map(|a| a.values.len()).product();
    let points = args
        .shard
        .map_or(grid_points, |s| s.points(grid_points).len());
    eprintln!(
        "sweeping {} over {} point{}{} ({})",
        scenario.display(),
        points,
        if points == 1 { "" } else { "s" },
        args.shard
            .map_or_else(String::new, |s| format!(" (shard {s} of {grid_points})")),
        axes.iter()
            .map(|a| format!("{}: {} values", a.name, a.values.len()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let opts = experiments::sweep::SweepOptions {
        axes,
        reps: super::reps(args.reps)?.or(reps_from_file),
        output: args.output.clone(),
        resume: args.resume,
        case: args.case,
        shard: args.shard,
        progress: true,
    };
    let pool = super::pool(args.threads)?;
    let started = std::time::Instant::now();
    // Ctrl-C: say how much is safe on disk (rows are flushed point by point) and how to go on.
    let file = args.output.display().to_string();
    let handler = ctrlc::set_handler(move || {
        let done = experiments::sweep::POINTS_ON_DISK.load(std::sync::atomic::Ordering::Relaxed);
        eprintln!(
            "\ninterrupted: {done} of {points} points are complete in {file}; run the same command with --resume to run the rest"
        );
        std::process::exit(130);
    });
    if let Err(e) = handler {
        eprintln!(
            "note: cannot catch Ctrl-C ({e}); an interrupted sweep still keeps its complete points"
        );
    }
    let result = pool.install(|| experiments::sweep::run_sweep(&loaded, &opts))?;
    super::notes(&result.notes);
    eprintln!(
        "{} points run, {} kept from before, in {:.1}s; rows in {}",
        result.points_run,
        result.points_resumed,
        started.elapsed().as_secs_f64(),
        args.output.display()
    );
    if let Some(dir) = &args.plot {
        let plots = experiments::plots::sweep_plots(&result, &loaded.file.name, dir)?;
        for p in plots.paths {
            eprintln!("plot: {}", p.display());
        }
        for why in plots.skipped {
            eprintln!("plot: {why}");
        }
    }
    Ok(())
}
