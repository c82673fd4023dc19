//! One module per command. Each parses nothing but its arguments, calls the crates below and
//! prints: data to stdout, progress and logs to stderr.

#[cfg(feature = "testbed")]
pub mod check_s3;
pub mod findings;
pub mod fit;
#[cfg(feature = "measure")]
pub mod measure;
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
