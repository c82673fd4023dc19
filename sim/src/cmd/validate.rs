//! `sim validate`: the scenario after presets and overrides, and what each case resolves to.

use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct ValidateArgs {
    pub scenario: PathBuf,
    /// Override a value: `path=value` (e.g. `store.first_byte.median=30ms`, or a setting name).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
}

pub fn run(args: ValidateArgs) -> Result<()> {
    let overrides = super::parse_overrides(&args.set)?;
    let loaded = scenario::load(&args.scenario, &overrides)?;
    super::out(&scenario::describe(&loaded)?)?;
    Ok(())
}
