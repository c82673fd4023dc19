//! The `sim` library: scenarios, the simulation driver, runs and reports. The binary in
//! `main.rs` is a thin CLI over it; tests in `tests/` use it directly.

pub mod driver;
pub mod plots;
pub mod report;
pub mod run;
pub mod scenario;
pub mod sweep;
pub mod tune;

use scenario::Override;

/// Parses `--set path=value` arguments.
pub fn parse_overrides(
    args: &[String],
) -> Result<Vec<Override>, scenario::overrides::OverrideError> {
    args.iter().map(|a| scenario::parse_override(a)).collect()
}

/// `sim settings`: every setting of a strategy with its value and what it does.
pub fn describe_settings(s: &planner::Strategy) -> String {
    let rows: Vec<Vec<String>> = std::iter::once(vec![
        "setting".to_string(),
        "value".to_string(),
        "what it does".to_string(),
    ])
    .chain(
        s.settings()
            .into_iter()
            .map(|(name, value, doc)| vec![name.to_string(), value, doc.to_string()]),
    )
    .collect();
    report::render_rows(&rows)
}
