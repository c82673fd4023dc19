//! `sim run`: every arm of a scenario side by side.

use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct RunArgs {
    pub scenario: PathBuf,
    /// Override a value: `path=value` (e.g. `store.first_byte.median=30ms`, or a setting name
    /// such as `input_format_parquet_coalesce_gap_bytes=1MiB` for every arm).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Replications (default: the scenario's `replications`).
    #[arg(long)]
    pub reps: Option<u32>,
    /// Root seed (default: the scenario's `seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Only these cases (repeatable).
    #[arg(long = "case")]
    pub cases: Vec<String>,
    /// Only these arms, by name (repeatable).
    #[arg(long = "arm")]
    pub arms: Vec<String>,
    /// Print the report as JSON instead of a table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the report as CSV instead of a table.
    #[arg(long)]
    pub csv: bool,
    /// Write the request trace (one row per HTTP request; the format `sim replay` reads).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Write a timeline CSV (concurrency, bytes in flight, pool memory over time).
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// Ablation: run `clickhouse-base`, base plus each redesign mechanism R1..R8 alone, and
    /// `clickhouse-redesign`, instead of the scenario's arms.
    #[arg(long)]
    pub ablation: bool,
    /// Plot each arm's timeline (replication 0, first query) into this directory.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Worker threads for replications and arms (results do not depend on it).
    #[arg(long)]
    pub threads: Option<usize>,
}

pub fn run(args: RunArgs) -> Result<()> {
    let overrides = super::parse_overrides(&args.set)?;
    let loaded = scenario::load(&args.scenario, &overrides)?;
    let opts = experiments::run::RunOptions {
        replications: super::reps(args.reps)?,
        seed: args.seed,
        cases: args.cases,
        arms: args.arms,
        trace: args.trace.is_some(),
        timeline: args.timeline.is_some() || args.plot.is_some(),
        ablation: args.ablation,
        keep_whole_up_to_chunks: None,
    };
    let pool = super::pool(args.threads)?;
    let started = std::time::Instant::now();
    let out = pool.install(|| experiments::run::run_scenario(&loaded, &opts))?;
    super::notes(&out.notes);
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
            for p in experiments::plots::timeline_plot(rows, &title, &stem)? {
                eprintln!("plot: {}", p.display());
            }
        }
    }
    if args.json {
        super::out(&format!("{}\n", out.report.to_json()))?;
    } else if args.csv {
        super::out(&out.report.to_csv()?)?;
    } else {
        super::out(&out.report.to_table())?;
    }
    Ok(())
}
