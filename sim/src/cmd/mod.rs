//! One module per command. Each parses nothing but its arguments, calls the crates below and
//! prints: data to stdout, progress and logs to stderr.

#[cfg(feature = "testbed")]
pub mod check_peers;
#[cfg(feature = "testbed")]
pub mod check_s3;
pub mod eval;
pub mod findings;
pub mod fit;
#[cfg(feature = "measure")]
pub mod measure;
pub mod prune;
pub mod record;
pub mod replay;
pub mod run;
pub mod settings;
pub mod sweep;
pub mod tune;
pub mod validate;

/// Parses `--set path=value` arguments.
pub fn parse_overrides(args: &[String]) -> anyhow::Result<Vec<scenario::Override>> {
    Ok(args
        .iter()
        .map(|a| scenario::parse_override(a))
        .collect::<Result<_, _>>()?)
}

/// Writes data to stdout. A closed pipe (`sim run ... | head`) ends the program quietly with
/// status 0, as command-line users expect; any other write error is an error.
pub fn out(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => Err(anyhow::anyhow!("writing to stdout: {e}")),
    }
}

/// A thread pool of `threads` workers (default: one per core). More than the machine's cores
/// is refused: results do not depend on the thread count, so extra threads only cost memory.
pub fn pool(threads: Option<usize>) -> anyhow::Result<rayon::ThreadPool> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match threads {
        Some(0) => anyhow::bail!("--threads 0 runs nothing; give at least 1 (default: {cores}, one per core)"),
        Some(n) if n > cores => anyhow::bail!(
            "--threads {n}: this machine has {cores} cores; results do not depend on the thread count, so more threads than cores only cost memory (give at most {cores})"
        ),
        _ => {}
    }
    Ok(rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()?)
}

/// Checks `--reps`: at least 1, at most the sweep's bound.
pub fn reps(reps: Option<u32>) -> anyhow::Result<Option<u32>> {
    reps.map(|n| replications("reps", n)).transpose()
}

/// Checks a replication count given as `--FLAG N`: at least 1, at most `MAX_REPLICATIONS`.
pub fn replications(flag: &str, n: u32) -> anyhow::Result<u32> {
    let max = experiments::sweep::MAX_REPLICATIONS;
    if n == 0 || n > max {
        anyhow::bail!("--{flag} {n}: give between 1 and {max} replications");
    }
    Ok(n)
}

/// Prints what a user should know about how the overrides landed.
pub fn notes(notes: &[String]) {
    for n in notes {
        eprintln!("note: {n}");
    }
}
