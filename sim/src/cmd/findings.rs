//! `sim findings`: the findings checks, measured vs simulated, as the README's table.

use anyhow::{Context, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct FindingsArgs {
    /// The scenarios directory.
    #[arg(long, default_value = "scenarios")]
    pub scenarios: PathBuf,
}

pub fn run(args: FindingsArgs) -> Result<()> {
    eprintln!(
        "running the findings checks on {} ...",
        args.scenarios.display()
    );
    let checks = checks::findings::Findings::new(&args.scenarios)
        .all()
        .with_context(|| format!("findings checks on {}", args.scenarios.display()))?;
    super::out(&checks::findings::markdown_table(&checks))?;
    Ok(())
}
