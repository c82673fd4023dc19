//! The `sim` library: scenarios, the simulation driver, runs and reports. The binary in
//! `main.rs` is a thin CLI over it; tests in `tests/` use it directly.

pub mod driver;
pub mod findings;
#[cfg(feature = "measure")]
pub mod measure;
pub mod plots;
pub mod report;
pub mod run;
#[cfg(feature = "testbed")]
pub mod s3check;
pub mod scenario;
pub mod sweep;
pub mod tune;
pub mod whatif;

use scenario::Override;

/// Parses `--set path=value` arguments.
pub fn parse_overrides(
    args: &[String],
) -> Result<Vec<Override>, scenario::overrides::OverrideError> {
    args.iter().map(|a| scenario::parse_override(a)).collect()
}

/// `sim settings`: every setting of a strategy with its value and what it does.
pub fn describe_settings(s: &planner::Strategy) -> String {
    let rows = s.settings();
    let w_name = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let w_value = rows
        .iter()
        .map(|r| r.1.chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    let mut out = format!(
        "{:<w_name$}  {:<w_value$}  what it does\n",
        "setting", "value"
    );
    for (name, value, doc) in rows {
        out.push_str(&format!("{name:<w_name$}  {value:<w_value$}  {doc}\n"));
    }
    out
}
